from stackbench.lib.snippets import code_hash, normalize_code


def test_whitespace_blank_lines_and_comment_lines_do_not_change_a_snippets_identity():
    shown = "import kv\n\n# open the store\ndb  =  kv.open('x')\n    db.put(1,\t2)\n"
    assert normalize_code(shown) == "import kv\ndb = kv.open('x')\ndb.put(1, 2)"
    assert code_hash(shown) == code_hash("import kv\ndb = kv.open('x')\ndb.put(1, 2)")


def test_different_code_has_a_different_sixteen_character_hash():
    first, second = code_hash("print(1)"), code_hash("print(2)")
    assert first != second
    assert len(first) == 16 and int(first, 16) >= 0


def test_a_trailing_comment_is_code_and_no_code_hashes_like_empty_code():
    assert code_hash("x = 1  # one") != code_hash("x = 1")
    assert normalize_code(None) == "" and code_hash("# only a comment\n\n") == code_hash("")
