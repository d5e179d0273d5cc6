"""Valid source in every checked language, built from a repeated unit (a function, a
method, an entry...) so that files can be of any length, and one-line breaks for each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    lang: str
    name: str  # a file name that selects the language
    head: str
    unit: str  # formatted with i
    tail: str
    #: a break: (text in a unit, text that breaks it)
    breaks: tuple[str, str]

    def text(self, units: int) -> str:
        return self.head + "".join(self.unit.format(i=i) for i in range(units)) + self.tail


SAMPLES: dict[str, Sample] = {
    "python": Sample(
        "python",
        "mod.py",
        '"""A module."""\n\nimport os\n\n\n',
        "def f{i}(a, b=None):\n"
        '    """Add."""\n'
        "    items = [a, b, {{'k': {i}}}]\n"
        "    if a > {i}:\n"
        "        return a + (b or 0)\n"
        "    for x in items:\n"
        "        print(x, os.sep)\n"
        "    return None\n\n\n",
        "class Tail:\n    pass\n",
        ("return a + (b or 0)", "return a + (b or 0"),
    ),
    "javascript": Sample(
        "javascript",
        "app.js",
        "'use strict';\nconst path = require('path');\n\n",
        "function f{i}(a, b) {{\n"
        "  const items = [a, b, {{ k: {i} }}];\n"
        "  if (a > {i}) {{\n"
        "    return a + (b || 0);\n"
        "  }}\n"
        "  for (const x of items) {{\n"
        "    console.log(x, path.sep);\n"
        "  }}\n"
        "  return null;\n"
        "}}\n\n",
        "module.exports = {};\n",
        ("return a + (b || 0);", "return a + (b || 0;"),
    ),
    "typescript": Sample(
        "typescript",
        "lib.ts",
        "import * as path from 'path';\n\ninterface Item {\n  k: number;\n}\n\n",
        "export function f{i}(a: number, b?: number): number | null {{\n"
        "  const items: Item[] = [{{ k: {i} }}];\n"
        "  if (a > {i}) {{\n"
        "    return a + (b ?? 0);\n"
        "  }}\n"
        "  for (const x of items) {{\n"
        "    console.log(x.k, path.sep);\n"
        "  }}\n"
        "  return null;\n"
        "}}\n\n",
        "export const done = true;\n",
        ("return a + (b ?? 0);", "return a + (b ?? 0;"),
    ),
    "tsx": Sample(
        "tsx",
        "view.tsx",
        "import React from 'react';\n\n",
        "export function View{i}(props: {{ n: number }}) {{\n"
        "  const items = [props.n, {i}];\n"
        "  return (\n"
        '    <div className="v{i}">\n'
        "      {{items.map((x) => <span key={{x}}>{{x}}</span>)}}\n"
        "    </div>\n"
        "  );\n"
        "}}\n\n",
        "export default View0;\n",
        ('<div className="v', '<div className="v"{'),
    ),
    "json": Sample(
        "json",
        "data.json",
        '{\n  "name": "sample",\n',
        '  "k{i}": {{"id": {i}, "tags": ["a", "b"], "ok": true, "v": null}},\n',
        '  "end": 0\n}\n',
        ('"ok": true,', '"ok": true,,'),
    ),
    "go": Sample(
        "go",
        "main.go",
        'package main\n\nimport "fmt"\n\n',
        "func f{i}(a int, b int) int {{\n"
        "\titems := []int{{a, b, {i}}}\n"
        "\tif a > {i} {{\n"
        "\t\treturn a + b\n"
        "\t}}\n"
        "\tfor _, x := range items {{\n"
        "\t\tfmt.Println(x)\n"
        "\t}}\n"
        "\treturn 0\n"
        "}}\n\n",
        "func main() {}\n",
        ("\t\treturn a + b\n", "\t\treturn a + (b\n"),
    ),
    "rust": Sample(
        "rust",
        "lib.rs",
        "use std::fmt;\n\n",
        "pub fn f{i}(a: i64, b: i64) -> i64 {{\n"
        "    let items = vec![a, b, {i}];\n"
        "    if a > {i} {{\n"
        "        return a + b;\n"
        "    }}\n"
        "    for x in &items {{\n"
        '        println!("{{}}", x);\n'
        "    }}\n"
        "    0\n"
        "}}\n\n",
        "pub struct Tail;\n",
        ("return a + b;", "return a + (b;"),
    ),
    "java": Sample(
        "java",
        "Main.java",
        "package demo;\n\nimport java.util.List;\n\npublic class Main {\n",
        "    public int f{i}(int a, int b) {{\n"
        "        List<Integer> items = List.of(a, b, {i});\n"
        "        if (a > {i}) {{\n"
        "            return a + b;\n"
        "        }}\n"
        "        for (int x : items) {{\n"
        "            System.out.println(x);\n"
        "        }}\n"
        "        return 0;\n"
        "    }}\n\n",
        "}\n",
        ("return a + b;", "return a + (b;"),
    ),
    "c": Sample(
        "c",
        "main.c",
        "#include <stdio.h>\n\n",
        "int f{i}(int a, int b) {{\n"
        "    int items[3] = {{a, b, {i}}};\n"
        "    if (a > {i}) {{\n"
        "        return a + b;\n"
        "    }}\n"
        "    for (int i = 0; i < 3; i++) {{\n"
        '        printf("%d\\n", items[i]);\n'
        "    }}\n"
        "    return 0;\n"
        "}}\n\n",
        "int main(void) { return 0; }\n",
        ("return a + b;", "return a + (b;"),
    ),
    "cpp": Sample(
        "cpp",
        "main.cpp",
        "#include <vector>\n#include <iostream>\n\nnamespace demo {\n\n",
        "int f{i}(int a, int b) {{\n"
        "    std::vector<int> items{{a, b, {i}}};\n"
        "    if (a > {i}) {{\n"
        "        return a + b;\n"
        "    }}\n"
        "    for (int x : items) {{\n"
        "        std::cout << x << std::endl;\n"
        "    }}\n"
        "    return 0;\n"
        "}}\n\n",
        "}  // namespace demo\n",
        ("return a + b;", "return a + (b;"),
    ),
    "csharp": Sample(
        "csharp",
        "Program.cs",
        "using System;\nusing System.Collections.Generic;\n\nnamespace Demo\n{\n"
        "    public class Program\n    {\n",
        "        public int F{i}(int a, int b)\n"
        "        {{\n"
        "            var items = new List<int> {{ a, b, {i} }};\n"
        "            if (a > {i})\n"
        "            {{\n"
        "                return a + b;\n"
        "            }}\n"
        "            foreach (var x in items)\n"
        "            {{\n"
        "                Console.WriteLine(x);\n"
        "            }}\n"
        "            return 0;\n"
        "        }}\n\n",
        "    }\n}\n",
        ("return a + b;", "return a + (b;"),
    ),
    "ruby": Sample(
        "ruby",
        "lib.rb",
        "require 'json'\n\nmodule Demo\n",
        "  def self.f{i}(a, b = nil)\n"
        "    items = [a, b, {{ k: {i} }}]\n"
        "    if a > {i}\n"
        "      return a + (b || 0)\n"
        "    end\n"
        "    items.each do |x|\n"
        "      puts x.to_json\n"
        "    end\n"
        "    nil\n"
        "  end\n\n",
        "end\n",
        ("return a + (b || 0)", "return a + (b || 0"),
    ),
    "bash": Sample(
        "bash",
        "run.sh",
        "#!/usr/bin/env bash\nset -euo pipefail\n\n",
        "f{i}() {{\n"
        '  local a="$1"\n'
        '  if [ "$a" -gt {i} ]; then\n'
        '    echo "big $a"\n'
        "  fi\n"
        "  for x in one two; do\n"
        '    echo "$x"\n'
        "  done\n"
        "}}\n\n",
        'echo "done"\n',
        ("  fi\n", "  fii\n"),
    ),
    "css": Sample(
        "css",
        "site.css",
        ":root {\n  --gap: 4px;\n}\n\n",
        ".c{i} {{\n  margin: {i}px;\n  padding: var(--gap);\n}}\n"
        ".c{i}:hover > a {{\n  color: #{i:03d};\n}}\n\n",
        "body {\n  margin: 0;\n}\n",
        ("  padding: var(--gap);\n}", "  padding: var(--gap);\n"),
    ),
    "html": Sample(
        "html",
        "page.html",
        "<!DOCTYPE html>\n<html>\n<head><title>t</title></head>\n<body>\n",
        '<section id="s{i}">\n  <h2 class="t">Title {i}</h2>\n'
        '  <p>Text <a href="/p/{i}">link</a>.</p>\n  <ul><li>one</li><li>two</li></ul>\n'
        "</section>\n",
        "</body>\n</html>\n",
        ('<h2 class="t">', '<h2 class="t>'),
    ),
    "yaml": Sample(
        "yaml",
        "conf.yaml",
        "name: sample\nitems:\n",
        '  - id: {i}\n    tags: [a, b]\n    opts:\n      on: true\n      note: "n{i}"\n',
        "end: 0\n",
        ("tags: [a, b]", "tags: [a, b"),
    ),
    "toml": Sample(
        "toml",
        "conf.toml",
        'title = "sample"\n\n',
        '[s{i}]\nid = {i}\ntags = ["a", "b"]\nopts = {{ on = true }}\n\n',
        "[end]\nx = 0\n",
        ('tags = ["a", "b"]', 'tags = ["a", "b"'),
    ),
}
