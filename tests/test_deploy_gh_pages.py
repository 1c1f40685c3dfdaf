"""``mkdocs gh-deploy`` of the example site to a remote that enforces GitHub's file size rules,
then the pushed ``gh-pages`` branch served as Pages would serve it, its chat box answering on
the visitor's CPU (wllama) while the site's gateway cannot be reached.

The remote is a local bare repository whose ``pre-receive`` hook reads every blob the push
brings (``git rev-list --objects`` and ``git cat-file --batch-check``) and, as GitHub does,
refuses the push when one is over 100 MiB and warns for one over 50 MiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from browser_sites import require_browser, run_node
from gateway_fixtures import free_port
from sites import copy_example

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MIB = 1024 * 1024
WARN_BYTES, LIMIT_BYTES = 50 * MIB, 100 * MIB
QUESTION = "Where did Teo work before his current job?"
PRE_RECEIVE = f"""#!/usr/bin/env bash
# GitHub's limits on pushed files: over {LIMIT_BYTES} bytes refused, over {WARN_BYTES} warned.
set -euo pipefail
zero=0000000000000000000000000000000000000000
refused=0
while read -r old new ref; do
  [ "$new" = "$zero" ] && continue
  while read -r type sha size path; do
    [ "$type" = blob ] || continue
    if [ "$size" -gt {LIMIT_BYTES} ]; then
      echo "error: File $path is $size bytes; this exceeds GitHub's file size limit of 100.00 MB" >&2
      refused=1
    elif [ "$size" -gt {WARN_BYTES} ]; then
      echo "warning: File $path is $size bytes; this is larger than GitHub's recommended" \
        "maximum file size of 50.00 MB" >&2
    fi
  done < <(git rev-list --objects "$new" --not --all \\
           | git cat-file --batch-check='%(objecttype) %(objectname) %(objectsize) %(rest)')
done
if [ "$refused" = 1 ]; then
  echo "error: GH001: Large files detected." >&2
  exit 1
fi
"""
GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.org",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.org",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV},
                          capture_output=True, text=True, timeout=600, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done


@pytest.fixture
def github_like_remote(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    git("init", "--bare", "-q", "-b", "main", str(remote), cwd=tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(PRE_RECEIVE, encoding="utf-8")
    hook.chmod(0o755)
    return remote


def test_the_remote_refuses_files_over_100_mib_and_warns_over_50(
        tmp_path: Path, github_like_remote: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    git("remote", "add", "origin", str(github_like_remote), cwd=work)
    (work / "big.bin").write_bytes(bytes(WARN_BYTES + 1))  # zeros: packs to almost nothing
    git("add", "big.bin", cwd=work)
    git("commit", "-q", "-m", "big", cwd=work)
    warned = git("push", "-q", "origin", "main", cwd=work)
    assert "remote: warning: File big.bin is 52428801 bytes" in warned.stderr

    (work / "huge.bin").write_bytes(bytes(LIMIT_BYTES + 1))
    git("add", "huge.bin", cwd=work)
    git("commit", "-q", "-m", "huge", cwd=work)
    refused = git("push", "-q", "origin", "main", cwd=work, check=False)
    assert refused.returncode != 0
    assert "remote: error: File huge.bin is 104857601 bytes" in refused.stderr
    assert "GH001: Large files detected" in refused.stderr
    assert "big.bin" not in refused.stderr, "only the blobs this push brings are read"


def test_gh_deploy_pushes_a_site_whose_box_answers_on_the_cpu(
        tmp_path: Path, github_like_remote: Path) -> None:
    require_browser()
    source = copy_example(tmp_path / "src").parent
    git("init", "-q", "-b", "main", cwd=source)
    git("add", ".", cwd=source)
    git("commit", "-q", "-m", "the example site", cwd=source)
    git("remote", "add", "pages", str(github_like_remote), cwd=source)

    unreachable = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    env = {**os.environ, **GIT_ENV, "NO_MKDOCS_2_WARNING": "1",
           "SITE_KNOWLEDGE_GATEWAY": unreachable,
           "SITE_KNOWLEDGE_SITE_URL": "http://127.0.0.1:8000/"}
    deployed = subprocess.run(
        [sys.executable, "-m", "mkdocs", "gh-deploy", "--remote-name", "pages", "--force",
         "--no-history", "-d", str(tmp_path / "site")],
        cwd=source, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert deployed.returncode == 0, deployed.stderr[-4000:]
    assert "remote: warning" not in deployed.stderr, deployed.stderr[-4000:]
    assert "chat box adds" in deployed.stderr

    pages = tmp_path / "gh-pages"
    git("clone", "-q", "--branch", "gh-pages", "--single-branch", str(github_like_remote),
        str(pages), cwd=tmp_path)
    assert git("rev-list", "--count", "HEAD", cwd=pages).stdout.strip() == "1"
    files = [p for p in pages.rglob("*") if p.is_file() and ".git" not in p.parts]
    largest = max(files, key=lambda p: p.stat().st_size)
    assert largest.stat().st_size <= WARN_BYTES, largest
    parts = sorted((pages / "assets/site-knowledge/vendor/models").glob("*.gguf"))
    assert len(parts) > 1 and parts[0].name.endswith(f"-00001-of-{len(parts):05d}.gguf")

    result = run_node("deploy.mjs", "local_engine",
                      json.dumps({"siteDir": str(pages), "question": QUESTION}))
    assert result["offsite"] == [] and result["missing"] == []
    answer = result["answer"]  # what grounding then keeps of it is test_browser_box's concern
    assert answer["engine"] == "wllama" and answer["text"].strip(), result["text"]
    assert "cannot be reached" in result["text"]
    assert "Answered by smollm2-135m-instruct-q8_0 on this device's CPU (wllama" in result["text"]
    served = set(result["served"])
    for part in parts:
        assert f"/{part.relative_to(pages).as_posix()}" in served, part.name
