#!/usr/bin/env python3
"""Turns a CSV file into a Markdown report (see ../reference.md). Standard library only."""

import argparse
import csv
import pathlib
import sys


def number(cell):
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None


def escape(cell):
    return cell.replace("|", "\\|").strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--title")
    args = parser.parse_args()

    source = pathlib.Path(args.input)
    with source.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    if not rows:
        print(f"{source}: the CSV is empty", file=sys.stderr)
        return 3
    header, body = rows[0], rows[1:]
    for index, row in enumerate(body, start=2):
        if len(row) != len(header):
            print(f"{source}: row {index} has {len(row)} cells, the header has {len(header)}",
                  file=sys.stderr)
            return 3

    title = args.title or source.stem
    lines = [f"# {title}", ""]
    lines.append("| " + " | ".join(escape(c) for c in header) + " |")
    lines.append("|" + "---|" * len(header))
    for row in body:
        lines.append("| " + " | ".join(escape(c) for c in row) + " |")
    lines += ["", "## Column summary", "", "| column | count | total | mean |", "|---|---:|---:|---:|"]
    for column, name in enumerate(header):
        values = [number(row[column]) for row in body]
        if body and all(v is not None for v in values):
            total = sum(values)
            lines.append(f"| {escape(name)} | {len(values)} | {total:.2f} | {total / len(values):.2f} |")
    pathlib.Path(args.output).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(body)} rows, {len(header)} columns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
