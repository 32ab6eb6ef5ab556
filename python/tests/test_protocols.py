import json

import rmcast


def test_protocols_is_the_cli_table(cli):
    assert rmcast.protocols() == json.loads(cli("protocols", "--json").stdout)


def test_protocols_lists_every_protocol_with_its_parameters():
    ps = rmcast.protocols()
    names = [p["name"] for p in ps]
    # The table is the list (none kept here): unique names, among them one per seed family.
    assert len(set(names)) == len(names), names
    assert {"saw", "dsp", "srm", "prmp", "xtp"} <= set(names), names
    srm = next(p for p in ps if p["name"] == "srm")
    keys = {q["key"] for q in srm["params"]}
    assert {"c1", "c2", "d1", "d2"} <= keys, keys
    for p in ps:
        for q in p["params"]:
            assert set(q) == {"key", "scenario", "flag", "unit", "range", "default", "on_sockets", "help"}
