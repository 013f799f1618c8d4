// A form generated from a skill's input schema (the JSON Schema subset skills use: objects,
// arrays, strings, numbers, integers, booleans, enums, defaults, descriptions, formats) and a
// validator for the same subset, so a bad value is shown next to its field before anything is
// sent. Whatever the form cannot express (oneOf, $ref, ...) becomes a JSON editor for that field.

const INPUT_TYPES = { email: "email", uri: "url", url: "url", date: "date", time: "time" };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "className") node.className = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

function typeOf(schema) {
  if (!schema || typeof schema !== "object") return "any";
  if (Array.isArray(schema.enum)) return "enum";
  let t = schema.type;
  if (Array.isArray(t)) t = t.find((x) => x !== "null") || t[0];
  if (t) return t;
  if (schema.properties) return "object";
  if (schema.items) return "array";
  return "any";
}

let counter = 0;
const fieldId = () => `f${++counter}`;

// A field editor: { node, get(), set(value), path }.
function editor(schema, path, label, required) {
  const type = typeOf(schema);
  if (type === "object" && schema.properties) return objectEditor(schema, path, label, required);
  if (type === "array" && schema.items && typeof schema.items === "object") return arrayEditor(schema, path, label, required);
  return scalarEditor(schema, type, path, label, required);
}

function labelFor(id, label, required, schema) {
  const l = el("label", { for: id, text: label || "value" });
  if (required) l.append(el("span", { className: "required", "aria-hidden": "true", text: "*" }));
  if (schema && schema.format) l.append(el("span", { className: "muted", text: ` (${schema.format})` }));
  return l;
}

function help(schema) {
  return schema && schema.description ? el("p", { className: "help", text: schema.description }) : null;
}

function errorSlot(path) {
  return el("p", { className: "field-error", "data-error-for": path, role: "alert" });
}

function scalarEditor(schema, type, path, label, required) {
  const id = fieldId();
  const wrap = el("div", { className: "field", "data-path": path });
  let input;
  let get;
  let set;
  if (type === "enum") {
    input = el("select", { id, name: path, "aria-required": required ? "true" : null });
    if (!required || schema.default === undefined) input.append(el("option", { value: "", text: "—" }));
    schema.enum.forEach((v, i) => input.append(el("option", { value: String(i), text: JSON.stringify(v).replace(/^"|"$/g, "") })));
    get = () => (input.value === "" ? undefined : schema.enum[Number(input.value)]);
    set = (v) => {
      const i = schema.enum.findIndex((x) => JSON.stringify(x) === JSON.stringify(v));
      input.value = i < 0 ? "" : String(i);
    };
  } else if (type === "boolean") {
    input = el("input", { id, name: path, type: "checkbox" });
    get = () => input.checked;
    set = (v) => (input.checked = v === true);
  } else if (type === "number" || type === "integer") {
    input = el("input", { id, name: path, type: "number", step: type === "integer" ? "1" : "any", inputmode: type === "integer" ? "numeric" : "decimal", min: schema.minimum, max: schema.maximum });
    get = () => (input.value === "" ? undefined : Number(input.value));
    set = (v) => (input.value = v === undefined || v === null ? "" : String(v));
  } else if (type === "string") {
    const inputType = INPUT_TYPES[schema.format];
    const long = !inputType && !(schema.maxLength && schema.maxLength <= 80);
    input = long
      ? el("textarea", { id, name: path, rows: "3" })
      : el("input", { id, name: path, type: inputType || "text", placeholder: schema.format === "date-time" ? "2026-12-01T12:00:00Z" : null });
    if (schema.maxLength) input.setAttribute("maxlength", schema.maxLength);
    get = () => (input.value === "" ? undefined : input.value);
    set = (v) => (input.value = v === undefined || v === null ? "" : String(v));
  } else {
    // Anything else: its JSON.
    input = el("textarea", { id, name: path, rows: "3", spellcheck: "false", placeholder: "JSON value" });
    get = () => {
      if (input.value.trim() === "") return undefined;
      try {
        return JSON.parse(input.value);
      } catch (_) {
        return { __invalidJson: input.value };
      }
    };
    set = (v) => (input.value = v === undefined ? "" : JSON.stringify(v, null, 2));
  }
  input.setAttribute("aria-describedby", `${id}-error`);
  const slot = errorSlot(path);
  slot.id = `${id}-error`;
  if (type === "boolean") {
    wrap.append(el("label", { for: id }, input, document.createTextNode(` ${label || "value"}`)));
  } else {
    wrap.append(labelFor(id, label, required, schema), input);
  }
  wrap.append(help(schema) || "", slot);
  if (schema && schema.default !== undefined) set(schema.default);
  return { node: wrap, get, set, path, focus: () => input.focus() };
}

function objectEditor(schema, path, label, required) {
  const fields = [];
  const box = el("fieldset", { "data-path": path });
  if (label) {
    const legend = el("legend", { text: label });
    if (required) legend.append(el("span", { className: "required", "aria-hidden": "true", text: "*" }));
    box.append(legend);
  }
  box.append(help(schema) || "", errorSlot(path));
  const req = new Set(schema.required || []);
  for (const [name, sub] of Object.entries(schema.properties || {})) {
    const child = editor(sub, `${path}/${escapePointer(name)}`, name, req.has(name));
    fields.push([name, child]);
    box.append(child.node);
  }
  return {
    node: box,
    path,
    get() {
      const out = {};
      for (const [name, f] of fields) {
        const v = f.get();
        if (v !== undefined) out[name] = v;
      }
      return out;
    },
    set(value) {
      const v = value && typeof value === "object" ? value : {};
      for (const [name, f] of fields) f.set(v[name]);
    },
    focus: () => fields.length && fields[0][1].focus(),
  };
}

function arrayEditor(schema, path, label, required) {
  const items = [];
  const box = el("fieldset", { "data-path": path });
  const legend = el("legend", { text: label || "items" });
  if (required) legend.append(el("span", { className: "required", "aria-hidden": "true", text: "*" }));
  const list = el("div");
  const add = el("button", { type: "button", text: `Add ${label || "item"}` });
  box.append(legend, help(schema) || "", errorSlot(path), list, add);
  function renumber() {
    items.forEach((item, i) => item.setPath(i));
  }
  function push(value) {
    const index = items.length;
    const row = el("div", { className: "array-item" });
    let child = editor(schema.items, `${path}/${index}`, `${label || "item"} ${index + 1}`, false);
    const remove = el("button", { type: "button", className: "quiet", "aria-label": `Remove ${label || "item"}`, text: "Remove" });
    row.append(child.node, remove);
    list.append(row);
    const item = {
      get: () => child.get(),
      setPath(i) {
        const v = child.get();
        const fresh = editor(schema.items, `${path}/${i}`, `${label || "item"} ${i + 1}`, false);
        fresh.set(v);
        row.replaceChild(fresh.node, child.node);
        child = fresh;
      },
    };
    remove.addEventListener("click", () => {
      items.splice(items.indexOf(item), 1);
      row.remove();
      renumber();
      add.focus();
    });
    items.push(item);
    if (value !== undefined) child.set(value);
    return child;
  }
  add.addEventListener("click", () => push(undefined).focus());
  const api = {
    node: box,
    path,
    get() {
      const values = items.map((i) => i.get()).map((v) => (v === undefined ? null : v));
      return values.length || required ? values : undefined;
    },
    set(value) {
      items.splice(0);
      list.replaceChildren();
      (Array.isArray(value) ? value : []).forEach((v) => push(v));
    },
    focus: () => add.focus(),
  };
  if (schema.default !== undefined) api.set(schema.default);
  return api;
}

function escapePointer(name) {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}

// Whether `schema` is a plain Agent Skill's: no input schema at all (its request is free text).
export function isPlain(schema) {
  return !schema || (typeof schema === "object" && !Object.keys(schema).length);
}

// A plain skill's one field: the request as text, sent as `{"prompt": TEXT}` (other arguments
// set from elsewhere — a re-run, the raw JSON — are kept beside it).
function requestEditor() {
  const id = fieldId();
  const wrap = el("div", { className: "field", "data-path": "" });
  const input = el("textarea", { id, name: "/prompt", rows: "6", placeholder: "What should the skill do?", "aria-describedby": `${id}-help` });
  let extra = {};
  wrap.append(
    labelFor(id, "Request", false),
    el("p", { className: "help", id: `${id}-help`, text: "This skill takes free text (sent as {\"prompt\": TEXT})." }),
    input,
    errorSlot(""),
  );
  return {
    node: wrap,
    get: () => (input.value ? Object.assign({}, extra, { prompt: input.value }) : Object.assign({}, extra)),
    set: (v) => {
      const rest = Object.assign({}, v && typeof v === "object" && !Array.isArray(v) ? v : {});
      input.value = typeof rest.prompt === "string" ? rest.prompt : "";
      delete rest.prompt;
      extra = rest;
    },
    focus: () => input.focus(),
  };
}

// Builds the form for `schema` into `container`; returns { get, set, showErrors, clearErrors }.
export function buildForm(schema, container) {
  container.replaceChildren();
  const root = isPlain(schema)
    ? requestEditor()
    : typeOf(schema) === "object" && schema.properties
      ? objectEditor(schema, "", "", false)
      : scalarEditor(schema || {}, "any", "", "arguments (JSON object)", true);
  // The root object needs no frame of its own.
  if (root.node.tagName === "FIELDSET") root.node.classList.add("root");
  container.append(root.node);
  return {
    get: () => root.get() || {},
    set: (v) => root.set(v),
    focus: () => root.focus && root.focus(),
    clearErrors() {
      container.querySelectorAll("[data-error-for]").forEach((n) => (n.textContent = ""));
      container.querySelectorAll(".invalid").forEach((n) => n.classList.remove("invalid"));
    },
    // `errors`: [{path, message}]; returns the messages no field took.
    showErrors(errors) {
      const left = [];
      for (const { path, message } of errors) {
        let p = path;
        let slot = null;
        // The nearest field that exists (a missing property is reported on its object).
        for (;;) {
          slot = container.querySelector(`[data-error-for="${CSS.escape(p)}"]`);
          if (slot || p === "") break;
          p = p.slice(0, p.lastIndexOf("/"));
        }
        if (!slot) {
          left.push(`${path || "(root)"}: ${message}`);
          continue;
        }
        slot.textContent = slot.textContent ? `${slot.textContent}; ${message}` : message;
        const field = slot.closest("[data-path]");
        if (field) field.classList.add("invalid");
      }
      const first = container.querySelector(".invalid input, .invalid select, .invalid textarea");
      if (first) first.focus();
      return left;
    },
  };
}

// Checks `value` against `schema` (the subset above); returns [{path, message}].
export function validate(schema, value, path = "") {
  const errors = [];
  if (!schema || typeof schema !== "object" || schema === true) return errors;
  const add = (message, at = path) => errors.push({ path: at, message });
  if (value && typeof value === "object" && value.__invalidJson !== undefined) {
    add("not valid JSON");
    return errors;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((x) => JSON.stringify(x) === JSON.stringify(value))) {
    add(`must be one of ${schema.enum.map((x) => JSON.stringify(x)).join(", ")}`);
    return errors;
  }
  if (schema.const !== undefined && JSON.stringify(schema.const) !== JSON.stringify(value)) add(`must be ${JSON.stringify(schema.const)}`);
  const types = schema.type === undefined ? [] : [].concat(schema.type);
  const actual = value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "number" ? (Number.isInteger(value) ? "integer" : "number") : typeof value;
  if (types.length && !types.some((t) => t === actual || (t === "number" && actual === "integer"))) {
    add(`must be ${types.join(" or ")}`);
    return errors;
  }
  if (actual === "string") {
    if (schema.minLength !== undefined && [...value].length < schema.minLength) add(`must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) add(`must be at most ${schema.maxLength} characters`);
    if (schema.pattern) {
      try {
        if (!new RegExp(schema.pattern, "u").test(value)) add(`must match ${schema.pattern}`);
      } catch (_) {
        /* a pattern JS cannot read is left to the server */
      }
    }
    if (schema.format === "email" && !/^[^@\s]+@[^@\s]+$/.test(value)) add("must be an email address");
    if ((schema.format === "uri" || schema.format === "url") && !/^[a-z][a-z0-9+.-]*:/i.test(value)) add("must be a URI");
    if (schema.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(value)) add("must be a date (YYYY-MM-DD)");
  }
  if (actual === "number" || actual === "integer") {
    if (schema.minimum !== undefined && value < schema.minimum) add(`must be ≥ ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) add(`must be ≤ ${schema.maximum}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) add(`must be > ${schema.exclusiveMinimum}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) add(`must be < ${schema.exclusiveMaximum}`);
  }
  if (actual === "array") {
    if (schema.minItems !== undefined && value.length < schema.minItems) add(`needs at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) add(`takes at most ${schema.maxItems} items`);
    if (schema.items && typeof schema.items === "object") value.forEach((v, i) => errors.push(...validate(schema.items, v, `${path}/${i}`)));
  }
  if (actual === "object") {
    for (const name of schema.required || []) {
      if (value[name] === undefined) add(`is required`, `${path}/${escapePointer(name)}`);
    }
    const props = schema.properties || {};
    for (const [name, v] of Object.entries(value)) {
      const at = `${path}/${escapePointer(name)}`;
      if (props[name]) errors.push(...validate(props[name], v, at));
      else if (schema.additionalProperties === false) add(`is not allowed here`, at);
      else if (typeof schema.additionalProperties === "object") errors.push(...validate(schema.additionalProperties, v, at));
    }
  }
  return errors;
}

// The violations in a server's `schema_violation` message ("...: /a/b: msg; /c: msg").
export function serverViolations(message) {
  const colon = message.indexOf("): ");
  const list = colon >= 0 ? message.slice(colon + 3) : message;
  return list.split("; ").map((part) => {
    const m = /^(\(root\)|\/[^:]*): (.*)$/s.exec(part);
    if (!m) return { path: "", message: part };
    return { path: m[1] === "(root)" ? "" : m[1], message: m[2] };
  });
}
