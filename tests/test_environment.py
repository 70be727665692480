"""environment.yml (the conda file of the design card) names exactly the pins of pyproject.toml."""
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(req: str) -> str:
    return re.split(r"[=<>!~\[; ]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    return {_name(r): r.replace(" ", "") for r in reqs}


def _environment() -> dict:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert isinstance(env, dict) and env.get("name") and env.get("dependencies"), \
        "environment.yml must be a conda file with `name` and `dependencies`"
    return env


def _pip_section(env: dict) -> list[str]:
    sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "environment.yml needs exactly one `- pip:` section"
    return [str(x) for x in sections[0]]


def test_environment_yml_parses_and_pins_python_311():
    env = _environment()
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in conda, f"environment.yml must pin python=3.11 (has {conda})"
    assert "pip" in conda, "environment.yml must list pip before its pip section"
    assert "-e .[test]" in _pip_section(env), "the pip section must install the package itself: `-e .[test]`"


def test_environment_yml_names_the_pins_of_pyproject():
    want = _pyproject_pins()
    have = {_name(r): r.replace(" ", "") for r in _pip_section(_environment()) if not r.startswith("-")}
    problems = []
    for name, pin in sorted(want.items()):
        if name not in have:
            problems.append(f"{pin} (pyproject.toml) is missing from environment.yml")
        elif have[name] != pin:
            problems.append(f"environment.yml has {have[name]} but pyproject.toml has {pin}")
    for name, pin in sorted(have.items()):
        if name not in want:
            problems.append(f"environment.yml has {pin}, which pyproject.toml does not list")
    for name, pin in sorted(have.items()):
        if "==" not in pin:
            problems.append(f"environment.yml: {pin} is not an exact pin (use NAME==VERSION)")
    assert not problems, "environment.yml and pyproject.toml disagree:\n  " + "\n  ".join(problems)


def test_pyproject_pins_every_dependency_exactly():
    loose = [pin for pin in _pyproject_pins().values() if "==" not in pin]
    assert not loose, f"pyproject.toml dependencies must be exact pins (NAME==VERSION): {loose}"


def test_licence_is_an_spdx_string_with_its_file():
    """A TOML-table licence makes setuptools >= 77 print a deprecation warning on every build."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = data["project"]
    assert isinstance(project.get("license"), str), 'use an SPDX string: license = "MIT"'
    for pattern in project.get("license-files", []):
        assert list(ROOT.glob(pattern)), f"license-files names {pattern}, which does not exist"
    setuptools = [r for r in data["build-system"]["requires"] if _name(r) == "setuptools"]
    assert setuptools and "==" in setuptools[0], "pin the build backend (setuptools==X, >= 77 for SPDX licences)"
