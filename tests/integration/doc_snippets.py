#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shell examples the user documentation shows, for test_docs.sh to run.

  doc_snippets.py OUTDIR

Writes OUTDIR/NN.sh (one example, as a reader would paste it), OUTDIR/NN.src
("FILE:LINE") and, where the text before the example states the exit status
it ends with ("... = 11)"), OUTDIR/NN.want. Examples not run are listed on
standard output with the reason, one line each, so that nothing is left out
silently.

Sources: the EXAMPLES section of docs/minivmm.1 (.nf/.fi blocks) and the
```sh blocks of docs/getting-started.md.
"""
import os
import re
import sys

# ```sh blocks of getting-started.md left out, by a command they contain,
# with the reason.
NOT_RUN = {
    "install-deps.sh": "installs packages and minivmm into /usr/local: the README's first command does this on a fresh machine",
    "make tinyconfig": "builds a Linux kernel: make linux-test builds the same guest-images/linux/inner.config",
}


def man_examples(path):
    lines = open(path).read().split("\n")
    out, in_ex, block, start, para = [], False, None, 0, []
    for i, line in enumerate(lines, 1):
        if line.startswith(".SH"):
            in_ex = line.strip() == ".SH EXAMPLES"
            continue
        if not in_ex:
            continue
        if line == ".nf":
            block, start = [], i + 1
        elif line == ".fi" and block is not None:
            text = "\n".join(block).replace("\\-", "-").replace("\\e", "\\") + "\n"
            want = re.findall(r"= (\d+)\)", " ".join(para))
            out.append((f"{path}:{start}", text, want[-1] if want else None))
            block, para = None, []
        elif block is not None:
            block.append(line)
        elif not line.startswith("."):
            para.append(line)
    return out


def md_blocks(path):
    lines = open(path).read().split("\n")
    out, block, start = [], None, 0
    for i, line in enumerate(lines, 1):
        if block is None and line.strip() == "```sh":
            block, start = [], i + 1
        elif block is not None and line.strip() == "```":
            out.append((f"{path}:{start}", "\n".join(block) + "\n", None))
            block = None
        elif block is not None:
            block.append(line)
    return out


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for src, text, want in man_examples("docs/minivmm.1") + md_blocks("docs/getting-started.md"):
        skip = [why for cmd, why in NOT_RUN.items() if cmd in text]
        if skip:
            print(f"not run: {src}: {skip[0]}")
            continue
        n += 1
        base = os.path.join(outdir, f"{n:02d}")
        open(base + ".sh", "w").write(text)
        open(base + ".src", "w").write(src + "\n")
        if want is not None:
            open(base + ".want", "w").write(want + "\n")
    if n == 0:
        sys.exit("doc_snippets.py: no example found")


main()
