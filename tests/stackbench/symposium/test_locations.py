import subprocess

import pytest

from stackbench.formats.symposium import Location
from stackbench.symposium.locations import LocationError, excerpt, resolve


def locate(repo, **spec):
    return [(m.path, m.line) for m in resolve(Location.model_validate(spec), repo)]


def test_a_search_in_one_file_finds_one_place(symposium_repo):
    assert locate(symposium_repo, search={"path": "src/auth.py", "regex": "def validate_token"}) == [("src/auth.py", 4)]


def test_a_search_in_a_folder_searches_every_file_and_can_be_ambiguous(symposium_repo):
    found = locate(symposium_repo, search={"path": "src", "regex": r"validate_token\("})
    assert ("src/auth.py", 4) in found and ("src/auth.py", 17) in found and ("src/test_auth.py", 5) in found
    assert locate(symposium_repo, search={"path": "src", "regex": r"validate_token\(", "extension": ".md"}) == []


def test_a_location_that_matches_nothing_is_empty_not_an_error(symposium_repo):
    assert locate(symposium_repo, search={"path": "src/auth.py", "regex": "def nothing_like_this"}) == []
    assert locate(symposium_repo, search={"path": "missing.py", "regex": "x"}) == []
    assert locate(symposium_repo, range={"path": "docs/auth.md", "line": 999}) == []


def test_a_range_points_at_its_line(symposium_repo):
    assert locate(symposium_repo, range={"path": "docs/auth.md", "line": 3}) == [("docs/auth.md", 3)]


def test_definitions_use_pythons_ast_and_a_keyword_search_elsewhere(symposium_repo, tmp_path):
    assert locate(symposium_repo, findDefinitions="login") == [("src/auth.py", 8)]
    assert locate(symposium_repo, findDefinitions="validate_token") == [("src/auth.py", 4)]
    (tmp_path / "a.js").write_text("// validate_token here\nfunction validate_token() {}\n")
    assert locate(tmp_path, findDefinitions="validate_token") == [], "a folder that is no repository shows nothing"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "a.js"], check=True)
    assert locate(tmp_path, findDefinitions="validate_token") == [("a.js", 2)]


def test_references_use_the_ast_for_python_and_word_boundaries_elsewhere(symposium_repo):
    found = locate(symposium_repo, findReferences="validate_token")
    assert ("src/auth.py", 9) in found and ("src/auth.py", 17) in found
    assert ("src/test_auth.py", 1) in found and ("src/test_auth.py", 5) in found
    assert ("docs/auth.md", 6) in found
    assert ("src/auth.py", 4) not in found, "the definition is not a reference"
    assert ("src/test_auth.py", 4) not in found, "test_validate_token is another name"


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt", "src/../../outside.txt", "~/.bashrc"])
def test_paths_cannot_leave_the_repository(symposium_repo, path):
    with pytest.raises(LocationError):
        resolve(Location.model_validate({"search": {"path": path, "regex": "x"}}), symposium_repo)


def test_a_symlink_out_of_the_repository_is_refused(tmp_path):
    (tmp_path / "repo").mkdir()
    (tmp_path / "secret.txt").write_text("token=1\n")
    (tmp_path / "repo" / "link.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(LocationError, match="outside the repository"):
        resolve(Location.model_validate({"range": {"path": "link.txt", "line": 1}}), tmp_path / "repo")


def test_a_bad_regex_is_named(symposium_repo):
    with pytest.raises(LocationError, match="is not valid"):
        resolve(Location.model_validate({"search": {"path": "src", "regex": "(unclosed"}}), symposium_repo)


def test_an_excerpt_shows_numbered_lines_around_the_match(symposium_repo):
    match = resolve(Location.model_validate({"findDefinitions": "login"}), symposium_repo)[0]
    rows = excerpt(symposium_repo, match)
    assert rows[0][0] == 5 and [n for n, _, hit in rows if hit] == [8] and rows[3][1] == "def login(user, token):"


def test_files_git_does_not_track_are_never_shown(symposium_repo):
    (symposium_repo / ".gitignore").write_text("var/\n")
    (symposium_repo / "var").mkdir()
    (symposium_repo / "var" / "secret_key").write_text("django-insecure-secret\n")
    (symposium_repo / "notes.txt").write_text("untracked secret_key notes\n")
    assert locate(symposium_repo, range={"path": "var/secret_key", "line": 1}) == []
    assert locate(symposium_repo, search={"path": "var/secret_key", "regex": "secret"}) == []
    assert locate(symposium_repo, search={"path": ".", "regex": "django-insecure|untracked secret"}) == []
    assert locate(symposium_repo, findReferences="secret_key") == []
