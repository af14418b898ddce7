import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from corral_yarn.errors import InputError
from corral_yarn.nomora.perf import PERF_FLOOR, PUBLISHED, PerfLatencyFunction, arc_cost, arc_costs, fit


@pytest.mark.parametrize("name,threshold", [("memcached", 40), ("strads", 20), ("tensorflow", 40), ("spark", 200)])
def test_published_functions_are_one_up_to_the_published_threshold_and_drop_after(name, threshold):
    p = PUBLISHED[name]
    assert p(0) == 1.0 and p(threshold) == 1.0
    assert p(threshold + 100) < 1.0


@settings(deadline=None)  # wall-clock deadlines fail on a loaded machine, not on the property
@given(st.sampled_from(sorted(PUBLISHED)), st.floats(0, 20_000), st.floats(0, 20_000))
def test_published_functions_do_not_increase_with_latency(name, a, b):
    low, high = sorted((a, b))
    assert PERF_FLOOR <= PUBLISHED[name](high) <= PUBLISHED[name](low) <= 1.0


def test_arc_cost_is_inverse_rounded_to_two_significant_digits_times_100():
    assert arc_cost(0.1) == 1000  # the paper's example
    assert arc_cost(1.0) == 100
    assert arc_cost(0.7) == 140  # 1/0.7 = 1.428... -> 1.4
    assert arc_cost(0.33) == 300  # 3.03 -> 3.0


def test_arc_cost_rejects_non_positive_perf():
    with pytest.raises(InputError, match="perf"):
        arc_cost(0)


def test_published_coefficients_are_the_preprints_polynomials_in_the_latency():
    x = 300.0  # 001, eq. 2 (Memcached) and eq. 4 (Spark), evaluated in x itself
    assert PUBLISHED["memcached"](x) == pytest.approx(1.067 - 3.093e-3 * x + 4.084e-6 * x**2 - 1.898e-9 * x**3)
    assert PUBLISHED["spark"](x) == pytest.approx(1.0199 - 1.161e-4 * x)


def test_vectorised_values_and_arc_costs_match_the_scalar_forms():
    latencies = np.linspace(0, 1500, 301)
    for p in PUBLISHED.values():
        values = p.values(latencies)
        assert list(values) == [p(lat) for lat in latencies]
        assert list(arc_costs(values)) == [arc_cost(v) for v in values]


def test_fit_recovers_a_known_cubic():
    truth = PerfLatencyFunction("cubic", 40.0, (1.0, -2.0e-3, 1.0e-6, -2.0e-10))
    points = [(lat, truth(lat)) for lat in range(0, 400, 20)]
    fitted = fit("mine", points, threshold_us=40)
    for lat in (60, 200, 300, 380):
        assert fitted(lat) == pytest.approx(truth(lat), abs=1e-6)


def test_fit_linear_for_spark_like_points():
    fitted = fit("s", [(1000 + d, 1 - 2e-4 * d) for d in (100, 200, 400, 800)], threshold_us=1000, degree=1)
    assert fitted.coefficients[1] == pytest.approx(-2e-4)


def test_fit_errors_name_the_field():
    with pytest.raises(InputError, match=r"points\[1\].latency_us"):
        fit("x", [(50, 0.9), (-1, 0.8)], threshold_us=40)
    with pytest.raises(InputError, match="points: need at least 4"):
        fit("x", [(50, 0.9), (60, 0.8)], threshold_us=40)
