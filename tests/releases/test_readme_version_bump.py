"""The README's maintainer line that bumps the release version rewrites release.version and nothing else (issue 35:
it once rewrote esco.version too), run as written on a copy of params.yaml."""

import re
import subprocess
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_the_readme_sed_changes_release_version_only(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    [line] = [l for l in readme.splitlines() if l.startswith("sed -i ") and "version" in l]
    command = re.match(r"(sed -i '[^']*' '[^']*'|sed -i '[^']*') params\.yaml", line)
    assert command, line
    params = tmp_path / "params.yaml"
    text = (REPO / "params.yaml").read_text(encoding="utf-8")
    # a version other than the README's target, whatever the repository's is now
    text = re.sub(r"(?m)^(release:\n(?:  .*\n)*?  version: )[0-9.]+", r"\g<1>0.0.1", text)
    assert "version: 0.0.1" in text
    # a params file whose esco: section also carries a version, as a maintainer's may
    params.write_text(text.replace("  version: null      # null: --esco-version", "  version: 1.2.0      # null: --esco-version"),
                      encoding="utf-8")
    before = yaml.safe_load(params.read_text(encoding="utf-8"))
    subprocess.run(command[0], shell=True, cwd=tmp_path, check=True)
    after = yaml.safe_load(params.read_text(encoding="utf-8"))
    assert before["esco"]["version"] == "1.2.0" == after["esco"]["version"]
    target = re.search(r"version: ([0-9.]+)/", command[0])[1]
    assert after["release"]["version"] == target != before["release"]["version"]
    after["release"]["version"] = before["release"]["version"]
    assert after == before
