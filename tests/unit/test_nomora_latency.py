import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from corral_yarn.errors import InputError
from corral_yarn.nomora.latency import LatencyMatrix, RackLatencyMatrix, by_rack, generate, load, parse_csv, parse_json, to_csv, to_json

CSV = "a,b,c\n0,10,200\n10,0,30.5\n200,30.5,0\n"


def test_csv_and_json_load_the_same_matrix(tmp_path):
    (tmp_path / "m.csv").write_text(CSV)
    from_csv = load(tmp_path / "m.csv")
    (tmp_path / "m.json").write_text(to_json(from_csv))
    from_json = load(tmp_path / "m.json")
    assert from_csv.names == from_json.names == ("a", "b", "c")
    assert np.array_equal(from_csv.latency_us, from_json.latency_us)
    assert from_json.latency("a", "c") == 200 and from_json.latency("c", "b") == 30.5


@pytest.mark.parametrize("text,field", [
    ('{"names": ["a", "b"], "latency_us": [[0, 1], [1, 0], [0, 0]]}', "latency_us"),
    ('{"names": ["a", "b"], "latency_us": [[0, 1], [1]]}', "latency_us[1]"),
    ('{"names": ["a", "b"], "latency_us": [[0, 1], [-3, 0]]}', "latency_us[1][0]"),
    ('{"names": ["a", "b"], "latency_us": [[0, 1], ["x", 0]]}', "latency_us[1][0]"),
    ('{"names": ["a", "b"], "latency_us": [[0, 1], [1, 7]]}', "latency_us[1][1]"),
    ('{"names": ["a", "a"], "latency_us": [[0, 1], [1, 0]]}', "names[1]"),
    ('{"names": "a", "latency_us": [[0]]}', "names"),
    ('{"names": [], "latency_us": []}', "names"),
    ('{"names": ["a", "b", "c"], "latency_us": [[0, 1, 2], [1, 0, 2], [2, 2, 0], [0, 0, 0]]}', "latency_us"),
    ('{"names": ["a", "b", "c", "d"], "latency_us": [[0, 1, 2, 3], [1, 0, 2, 3], [2, 2, 0, NaN], [3, 3, 3, 0]]}',
     "latency_us[2][3]"),
])
def test_bad_json_names_the_field(text, field):
    with pytest.raises(InputError) as error:
        parse_json(text)
    assert error.value.field == field


def test_bad_csv_names_the_cell_and_bad_files_name_the_file(tmp_path):
    with pytest.raises(InputError) as error:
        parse_csv("a,b\n0,1\n1,zero\n")
    assert error.value.field == "latency_us[1][1]"
    with pytest.raises(InputError, match="latency_file"):
        load(tmp_path / "m.txt")
    with pytest.raises(InputError, match="latency_file"):
        load(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="not JSON"):
        parse_json("{")
    with pytest.raises(InputError, match="names"):
        parse_json(to_json(parse_csv(CSV))).latency("a", "zz")


def test_generated_matrix_has_the_fat_tree_shape():
    matrix = generate(pods=2, racks_per_pod=3, hosts_per_rack=8, seed=1)
    assert len(matrix.names) == 48
    values = matrix.latency_us
    assert np.array_equal(values, values.T) and not np.diagonal(values).any()
    rack = np.repeat(np.arange(6), 8)
    pod = rack // 3
    off_diagonal = ~np.eye(48, dtype=bool)
    same_rack = (rack[:, None] == rack[None, :]) & off_diagonal
    same_pod = (pod[:, None] == pod[None, :]) & ~(rack[:, None] == rack[None, :])
    cross_pod = pod[:, None] != pod[None, :]
    medians = [np.median(values[mask]) for mask in (same_rack, same_pod, cross_pod)]
    assert medians[0] < medians[1] < medians[2]
    assert medians == pytest.approx([20, 60, 150], rel=0.15)
    assert matrix.names[8] == "pod0-rack1-host0" and matrix.names[24] == "pod1-rack3-host0"


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_generation_is_seeded(seed):
    first, second = generate(1, 2, 3, seed), generate(1, 2, 3, seed)
    assert np.array_equal(first.latency_us, second.latency_us)
    assert not np.array_equal(first.latency_us, generate(1, 2, 3, seed + 1).latency_us)


def test_generate_rejects_empty_shapes():
    with pytest.raises(InputError, match="hosts_per_rack"):
        generate(1, 1, 0, seed=0)


def test_matrix_rejects_a_non_square_array():
    with pytest.raises(InputError, match="latency_us"):
        LatencyMatrix(("a", "b"), np.zeros((2, 3)))


def test_host_pairs_become_rack_pairs_by_their_largest_latency_and_round_trip_through_csv():
    hosts = LatencyMatrix(("a1", "a2", "b1"), np.array([[0.0, 10.0, 300.0], [12.0, 0.0, 250.0], [310.0, 260.0, 0.0]]))
    racks = by_rack(hosts, {"a1": "/rack-a", "a2": "/rack-a", "b1": "/rack-b"})
    assert racks.names == ("/rack-a", "/rack-b")
    assert racks.latency_us.tolist() == [[12.0, 300.0], [310.0, 0.0]]
    back = parse_csv(to_csv(racks), RackLatencyMatrix)
    assert back.names == racks.names and np.array_equal(back.latency_us, racks.latency_us)
