//! Scripts of the kind the public document skills bundle, through the real binary, the real
//! `uv` and the sandbox: a fillable PDF made with reportlab and read back with pypdf, a sheet
//! written and read with openpyxl, a .docx and a .pptx unpacked and packed again (the docx
//! returned to the caller as an artifact that opens) — one environment, built once — and a
//! sheet's formulas recalculated by LibreOffice (`soffice --headless`, offered as
//! a system tool) and read back, as the xlsx skill's `recalc.py` does. The model is the
//! embedded mock, whose scenario calls `run_skill_script` and answers from what the script
//! printed.
//!
//! The LibreOffice test needs `soffice` (Debian's `libreoffice-calc-nogui`, which `.ci/run`
//! installs): without it the test is skipped with a notice, and fails under `CI`.

use crate::scripts_support;

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::Value;
use skillet_protocol::{Message, ProducedFile};

use scripts_support::{Host, needs_system_tools, scripts_setting, text, uv};

const BUILDING: &str = "building the Python environment of skill";

/// Scripts of the kind the public document skills bundle (written here, the corpus cannot be
/// fetched in CI): a fillable PDF made with reportlab and its fields read back with pypdf, a
/// sheet written and read with openpyxl, a .docx made with python-docx and a .pptx made with
/// python-pptx, each unpacked and packed again and opened — one environment with all five
/// packages, built once from PyPI.
const DOCUMENT_SCRIPTS: [(&str, &str); 5] = [
    (
        "make_form.py",
        "from reportlab.pdfgen import canvas\nc = canvas.Canvas('form.pdf')\n\
         c.drawString(72, 750, 'Form')\nc.acroForm.textfield(name='name', x=72, y=700)\n\
         c.acroForm.checkbox(name='agree', x=72, y=650)\nc.showPage()\nc.save()\n\
         print('made form.pdf')\n",
    ),
    (
        "fields.py",
        "from pypdf import PdfReader\n\
         print('fields:', ','.join(sorted(PdfReader('form.pdf').get_fields())))\n",
    ),
    (
        "sheet.py",
        "import openpyxl\nbook = openpyxl.Workbook()\nsheet = book.active\n\
         for i, v in enumerate([1, 2, 3], start=1):\n    sheet.cell(row=i, column=1, value=v)\n\
         book.save('book.xlsx')\nback = openpyxl.load_workbook('book.xlsx').active\n\
         print('sheet: total=%d' % sum(c.value for c in back['A']))\n",
    ),
    (
        "docx_roundtrip.py",
        "import docx, zipfile, pathlib\nd = docx.Document()\nd.add_paragraph('hello docx')\n\
         d.save('a.docx')\nzipfile.ZipFile('a.docx').extractall('unpacked')\n\
         with zipfile.ZipFile('b.docx', 'w', zipfile.ZIP_DEFLATED) as z:\n\
         \x20   for p in sorted(pathlib.Path('unpacked').rglob('*')):\n\
         \x20       z.write(p, p.relative_to('unpacked'))\n\
         print('docx:', docx.Document('b.docx').paragraphs[0].text)\n",
    ),
    (
        "pptx_roundtrip.py",
        "import pptx, zipfile, pathlib\np = pptx.Presentation()\n\
         slide = p.slides.add_slide(p.slide_layouts[5])\nslide.shapes.title.text = 'hello pptx'\n\
         p.save('a.pptx')\nzipfile.ZipFile('a.pptx').extractall('unpacked_pptx')\n\
         with zipfile.ZipFile('b.pptx', 'w', zipfile.ZIP_DEFLATED) as z:\n\
         \x20   for f in sorted(pathlib.Path('unpacked_pptx').rglob('*')):\n\
         \x20       z.write(f, f.relative_to('unpacked_pptx'))\n\
         print('pptx:', pptx.Presentation('b.pptx').slides[0].shapes.title.text)\n",
    ),
];

#[test]
fn document_scripts_make_and_read_back_pdf_forms_sheets_docx_and_pptx_in_their_environment() {
    let Some(uv) = uv() else { return };
    let host = Host::new(&uv, "");
    let dir = host.path().join("skills/documents");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: documents\ndescription: Makes and reads documents.\n---\nRun the scripts.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("requirements.txt"),
        "pypdf==5.4.0\nreportlab==4.2.5\nopenpyxl==3.1.5\npython-docx==1.1.2\npython-pptx==1.0.2\n",
    )
    .unwrap();
    for (name, source) in DOCUMENT_SCRIPTS {
        std::fs::write(dir.join("scripts").join(name), source).unwrap();
    }
    // Latest stage first: each rule answers the result the previous script printed.
    let call = |script: &str| {
        format!(
            "reply: {{ tool_calls: [{{ name: run_skill_script, arguments: {{ path: scripts/{script} }} }}] }}"
        )
    };
    let scenario = format!(
        "rules:\n  - when: {{ tool_result_contains: \"pptx: hello pptx\" }}\n    reply: {{ text: OK }}\n\
         \x20 - when: {{ tool_result_contains: \"docx: hello docx\" }}\n    {}\n\
         \x20 - when: {{ tool_result_contains: \"sheet: total=6\" }}\n    {}\n\
         \x20 - when: {{ tool_result_contains: \"fields: agree,name\" }}\n    {}\n\
         \x20 - when: {{ tool_result_contains: \"made form.pdf\" }}\n    {}\n\
         \x20 - when: {{ turn: 1 }}\n    {}\n\
         \x20 - when: {{ tool_results: true }}\n    reply: {{ text: FAILED }}\n",
        call("pptx_roundtrip.py"),
        call("docx_roundtrip.py"),
        call("sheet.py"),
        call("fields.py"),
        call("make_form.py"),
    );
    std::fs::write(dir.join("mock-scenario.yaml"), scenario).unwrap();

    let run = host.run(&["run", "documents", "make the documents", "--json"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr.matches(BUILDING).count(),
        1,
        "one environment for the five packages, built once: {stderr}"
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    let Ok(Message::CallResponse(response)) = skillet_protocol::decode(stdout.trim()) else {
        panic!("--json prints the answer: {stdout}");
    };
    let result = response.data.expect("a result");
    assert!(result.success, "{:?}", result.summary);
    assert_eq!(result.data, Some(Value::from("OK")));

    // The packed document comes back to the caller as a base64 artifact of the .docx type,
    // whose chunks (the last one final) join into one encoding; decoded, python-docx opens it.
    let files = ProducedFile::from_events(&result.events);
    let packed = files
        .iter()
        .find(|f| f.name == "b.docx")
        .unwrap_or_else(|| panic!("no whole b.docx artifact among {} files", files.len()));
    assert_eq!(
        packed.mime,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    );
    assert!(packed.base64, "a binary file travels as base64");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&packed.content)
        .expect("the chunks join into one base64 encoding");
    let returned = tempfile::tempdir().unwrap();
    let docx = returned.path().join("returned.docx");
    std::fs::write(&docx, bytes).unwrap();
    let python = environment_python(&host.envs());
    let opened = std::process::Command::new(&python)
        .arg("-c")
        .arg("import docx, sys; print(docx.Document(sys.argv[1]).paragraphs[0].text)")
        .arg(&docx)
        .output()
        .expect("run the environment's python");
    assert!(opened.status.success(), "{}", text(&opened));
    assert_eq!(String::from_utf8_lossy(&opened.stdout).trim(), "hello docx");
}

/// The interpreter of the one environment built under `envs` (it has python-docx).
fn environment_python(envs: &Path) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(envs)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin/python"))
        .filter(|p| p.exists())
        .collect();
    assert_eq!(found.len(), 1, "one environment under {}", envs.display());
    found.into_iter().next().unwrap()
}

/// `soffice` on this machine, or a notice (a failure under `CI`).
fn soffice() -> Option<PathBuf> {
    let found = ["/usr/bin/soffice", "/usr/lib/libreoffice/program/soffice"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but there is no soffice: apt-get install libreoffice-calc-nogui"
        );
        eprintln!(
            "\n==== SKIPPED LibreOffice recalc test: no soffice (apt-get install \
             libreoffice-calc-nogui) ====\n"
        );
    }
    found
}

/// Writes a sheet whose formula has no cached value (openpyxl writes none), has LibreOffice
/// recalculate it into a copy, and reads the value back: what `xlsx/recalc.py` of the public
/// skills does, in the sandbox with LibreOffice's profile in the workspace.
const RECALC_SCRIPT: &str = "import os, subprocess, sys, openpyxl\n\
book = openpyxl.Workbook()\nsheet = book.active\n\
sheet['A1'] = 6\nsheet['A2'] = 7\nsheet['A3'] = '=A1*A2'\nbook.save('in.xlsx')\n\
before = openpyxl.load_workbook('in.xlsx', data_only=True).active['A3'].value\n\
profile = 'file://' + os.path.abspath('.lo-profile')\n\
done = subprocess.run(['soffice', '-env:UserInstallation=' + profile, '--headless', \
'--norestore', '--calc', '--convert-to', 'xlsx', '--outdir', 'out', 'in.xlsx'], \
capture_output=True, text=True, timeout=240)\n\
print('soffice exit', done.returncode, done.stderr[-300:], file=sys.stderr)\n\
after = openpyxl.load_workbook('out/in.xlsx', data_only=True).active['A3'].value\n\
print('recalculated: before=%s after=%s' % (before, after))\n";

#[test]
fn libreoffice_recalculates_a_sheets_formulas_in_the_sandbox() {
    let Some(uv) = uv() else { return };
    let Some(soffice) = soffice() else { return };
    let host = Host::new(&uv, "");
    scripts_setting(&host, &format!("tools = [\"{}\"]", soffice.display()));
    // LibreOffice reserves a few GiB of address space, starts in seconds, and puts its
    // single-instance pipe in /tmp whatever TMPDIR says.
    scripts_setting(
        &host,
        "\n[skills.scripts.sandbox]\ntimeout_ms = 240000\n\
         [skills.scripts.sandbox.limits]\naddress_space_bytes = 17179869184\n\
         cpu_seconds = 240\nprocesses = 256\nopen_files = 1024\n\
         [skills.scripts.sandbox.filesystem]\nread_write = [\"/tmp\"]\n",
    );
    host.skill(
        "recalc",
        "openpyxl==3.1.5\n",
        ("recalc.py", RECALC_SCRIPT),
        "recalculated: before=None after=42",
    );
    needs_system_tools(&host, "recalc", r#"["soffice"]"#);
    // `needs_system_tools` rewrote SKILL.md; the requirements and the scenario stay.
    let run = host.run(&["run", "recalc", "recalculate the sheet"]);
    let out = text(&run);
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "OK",
        "LibreOffice recalculated A3 = A1*A2 in the sandbox: {out}"
    );
}
