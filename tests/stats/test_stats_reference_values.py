"""Published reference values (copied from ../shared/reference/vectors.json, each with its source).

Where a figure belongs to a computation the workbench does itself, our function
is checked; where it documents a library we rely on (krippendorff at other
levels of measurement, statsmodels' McNemar and Bowker tests), the library
call is checked, so an upgrade that changes it is caught here. The last test checks that the copies here are
the file's, so a reference moved in the file (by 1% or by one bit) fails here too.

Tolerances, each chosen to admit only the digits a source could not give and far below 1% of any value here:
rel=1e-12 where the reference is a full double re-computed by the library (the last bits may move with the
summation order of a numpy or BLAS build); rel=1e-9 for p-values, which go through scipy's special functions
(their last digits differ between releases); abs=5e-11 and abs=5e-9 where the source prints 10 and 8 decimals
(half a unit in the last printed place); abs=1e-15 where the value is a short exact fraction; exact where
floating point represents it exactly (3/4, 5/8).
"""

import json
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import SquareTable, mcnemar

from workbench.stats import (agreement_metrics, corrected_pass_rate, human_ceiling, metrics_from_confusion,
    pass_at_k, pass_hat_k, ppi_mean, rogan_gladen, stuart_maxwell)
from workbench.stats.agreement import gwet_ac

nan = np.nan
VECTORS = Path(__file__).resolve().parents[3] / "shared" / "reference" / "vectors.json"

# Krippendorff (2011) "Computing Krippendorff's alpha-reliability", 4 coders x 12 units
# with missing values; rows are coders.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
# Wikipedia "Krippendorff's alpha" worked example, 3 coders x 15 units.
WIKIPEDIA = [
    [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
    [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
    [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
]


def _long(reliability_data):
    rows = [(unit, coder, value)
            for coder, values in enumerate(reliability_data)
            for unit, value in enumerate(values) if not np.isnan(value)]
    return pd.DataFrame(rows, columns=["item_id", "rater", "score"])


def test_krippendorff_2011_ordinal_through_human_ceiling():
    # Krippendorff (2011), ordinal: 0.8153875037548814
    result = human_ceiling(_long(KRIPPENDORFF_2011), scale=(1, 2, 3, 4, 5))
    assert result["krippendorff_alpha_ordinal"] == pytest.approx(0.8153875037548814, rel=1e-12)


KRIPPENDORFF_CASES = [  # in the order of vectors.json
    (KRIPPENDORFF_2011, "nominal", 0.743421052631579),    # Krippendorff (2011); exactly 113/152
    (KRIPPENDORFF_2011, "ordinal", 0.8153875037548814),   # Krippendorff (2011)
    (KRIPPENDORFF_2011, "interval", 0.8491071428571428),  # Krippendorff (2011); exactly 951/1120
    (KRIPPENDORFF_2011, "ratio", 0.7974027747116121),     # Krippendorff (2011)
    (WIKIPEDIA, "nominal", 0.691358024691358),            # Wikipedia worked example
    (WIKIPEDIA, "interval", 0.8108448928121059),          # Wikipedia worked example
]


@pytest.mark.parametrize("data, level, expected", KRIPPENDORFF_CASES)
def test_krippendorff_library_reproduces_published_alpha(data, level, expected):
    assert krippendorff.alpha(reliability_data=data, level_of_measurement=level) == pytest.approx(expected, rel=1e-12)


def test_krippendorff_fractions():
    # vectors.json notes: nominal is exactly 113/152 and interval 951/1120 on the 2011 example.
    assert 113 / 152 == pytest.approx(0.743421052631579, rel=1e-15)
    assert 951 / 1120 == pytest.approx(0.8491071428571428, rel=1e-15)


# Artstein and Poesio (2008) Table 1 (also scikit-learn test_cohen_kappa): 2 categories.
AP_Y1 = [0] * 40 + [1] * 60
AP_Y2 = [0] * 20 + [1] * 20 + [0] * 10 + [1] * 50
# Artstein and Poesio (2008), three categories (scikit-learn test_cohen_kappa).
AP3_Y1 = [0] * 46 + [1] * 44 + [2] * 10
AP3_Y2 = [0] * 52 + [1] * 32 + [2] * 16
# scikit-learn test_cohen_kappa weighted case, relabelled to -1/0/+1 (values unchanged).
SK_Y1 = [-1] * 46 + [0] * 44 + [1] * 10
SK_Y2 = [-1] * 50 + [0] * 40 + [1] * 10


def test_reference_label_lists_have_the_published_shape():
    assert len(AP_Y1) == len(AP_Y2) == len(AP3_Y1) == len(AP3_Y2) == len(SK_Y1) == len(SK_Y2) == 100


KAPPA_CASES = [  # in the order of vectors.json
    (AP_Y1, AP_Y2, (0, 1), "cohen_kappa", 0.34782608695652173),              # Artstein & Poesio (2008) Table 1
    (AP3_Y1, AP3_Y2, (0, 1, 2), "cohen_kappa", 0.8013245033112583),          # Artstein & Poesio (2008), 3 categories
    (SK_Y1, SK_Y2, (-1, 0, 1), "cohen_kappa", 0.9315068493150684),           # scikit-learn weighted case, unweighted
    (SK_Y1, SK_Y2, (-1, 0, 1), "cohen_kappa_linear", 0.9411764705882353),    # scikit-learn weighted case, linear
    (SK_Y1, SK_Y2, (-1, 0, 1), "cohen_kappa_quadratic", 0.9541284403669725), # scikit-learn weighted case, quadratic
]


@pytest.mark.parametrize("y1, y2, scale, name, expected", KAPPA_CASES)
def test_cohen_kappa_published(y1, y2, scale, name, expected):
    assert agreement_metrics(y1, y2, scale=scale, pass_threshold=scale[1])[name] == pytest.approx(expected, rel=1e-12)


# Gwet, Handbook of Inter-Rater Reliability; irrCAC table_cont3x3abstractors (rows rater 1, columns rater 2).
GWET_3X3 = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
_IDX = np.arange(3)
WEIGHTS = {
    "identity": np.eye(3),
    "linear": 1 - np.abs(_IDX[:, None] - _IDX[None, :]) / 2,
    "quadratic": 1 - (_IDX[:, None] - _IDX[None, :]) ** 2 / 4,
}


GWET_METRICS = [
    ("cohen_kappa", 0.7964094022),            # Gwet handbook, identity weights
    ("cohen_kappa_linear", 0.842902028),      # Gwet handbook, linear weights
    ("cohen_kappa_quadratic", 0.8921568627),  # Gwet handbook, quadratic weights
    ("gwet_ac2_linear", 0.9000227221),        # Gwet handbook, AC2 linear weights
]


@pytest.mark.parametrize("name, expected", GWET_METRICS)
def test_gwet_table_agreement_metrics(name, expected):
    metrics = metrics_from_confusion(GWET_3X3, scale=(1, 2, 3), pass_threshold=2)
    assert metrics[name] == pytest.approx(expected, abs=5e-11)


GWET_AC = [
    ("identity", 0.8493305482),   # Gwet handbook, AC1
    ("linear", 0.9000227221),     # Gwet handbook, AC2 linear
    ("quadratic", 0.9402368793),  # Gwet handbook, AC2 quadratic
]


@pytest.mark.parametrize("weights, expected", GWET_AC)
def test_gwet_ac1_ac2(weights, expected):
    assert gwet_ac(GWET_3X3[None].astype(float), WEIGHTS[weights])[0] == pytest.approx(expected, abs=5e-11)


def _pairs_from_table(table):
    k = len(table)
    rows, cols = np.divmod(np.repeat(np.arange(k * k), np.asarray(table).ravel()), k)
    return rows + 1, cols + 1


GWET_ALPHA = [
    ("nominal", 0.7972584977),                            # Gwet handbook, Krippendorff alpha, identity weights
    (lambda v1, v2, i1, i2, n_v, dtype: np.abs(v1 - v2).astype(dtype), 0.8435869954),  # linear weights
    ("interval", 0.8926487176),                           # Gwet handbook, quadratic weights
]


@pytest.mark.parametrize("level, expected", GWET_ALPHA)
def test_gwet_table_krippendorff(level, expected):
    rater1, rater2 = _pairs_from_table(GWET_3X3)
    got = krippendorff.alpha(reliability_data=[rater1, rater2], level_of_measurement=level, value_domain=[1, 2, 3])
    assert got == pytest.approx(expected, abs=5e-11)


# Stuart (1955) unaided distance vision of 7477 women; statsmodels SquareTable.homogeneity / .symmetry.
STUART = [[1520, 266, 124, 66], [234, 1512, 432, 78], [117, 362, 1772, 205], [36, 82, 179, 492]]
STUART_MAXWELL = {"statistic": 11.95656962298254, "df": 3, "pvalue": 0.007533425054800591}
BOWKER = {"statistic": 19.106550215266772, "df": 6, "pvalue": 0.003987419840428568}  # statsmodels .symmetry()


def test_stuart_maxwell_published():
    right, left = _pairs_from_table(STUART)
    result = stuart_maxwell(right, left, scale=(1, 2, 3, 4))
    assert result.statistic == pytest.approx(STUART_MAXWELL["statistic"], rel=1e-12)
    assert result.df == STUART_MAXWELL["df"]
    assert result.p_value == pytest.approx(STUART_MAXWELL["pvalue"], rel=1e-9)


def test_bowker_symmetry_library():
    result = SquareTable(np.array(STUART), shift_zeros=False).symmetry()
    assert result.statistic == pytest.approx(BOWKER["statistic"], rel=1e-12)
    assert result.df == BOWKER["df"]
    assert result.pvalue == pytest.approx(BOWKER["pvalue"], rel=1e-9)


# Agresti, Categorical Data Analysis, presidential approval ratings.
MCNEMAR = [[794, 150], [86, 570]]
MCNEMAR_EXPECTED = {"chi2_no_correction": 17.35593220338983, "p_no_correction": 3.099293441045215e-05,
                    "chi2_continuity": 16.81779661016949, "exact_pvalue": 3.715936139571387e-05}


def test_mcnemar_is_stuart_maxwell_on_two_labels():
    first, second = _pairs_from_table(MCNEMAR)
    result = stuart_maxwell(first, second, scale=(1, 2))
    assert result.statistic == pytest.approx(MCNEMAR_EXPECTED["chi2_no_correction"], rel=1e-12)
    assert result.p_value == pytest.approx(MCNEMAR_EXPECTED["p_no_correction"], rel=1e-9)


def test_mcnemar_library_variants():
    statistic = mcnemar(MCNEMAR, exact=False, correction=True).statistic
    assert statistic == pytest.approx(MCNEMAR_EXPECTED["chi2_continuity"], rel=1e-12)
    assert mcnemar(MCNEMAR, exact=True).pvalue == pytest.approx(MCNEMAR_EXPECTED["exact_pvalue"], rel=1e-9)


# judgy README example (ai-evals-course/judgy); 1 = pass.
RG_HUMAN = [1, 1, 0, 0, 1, 0, 1, 0]
RG_JUDGE_LABELED = [1, 0, 0, 1, 1, 0, 1, 0]
RG_JUDGE_UNLABELED = [1, 1, 0, 1, 0, 1, 0, 1]
RG_EXPECTED = {"tpr": 0.75, "tnr": 0.75, "p_observed": 0.625, "theta_corrected": 0.75}


def test_rogan_gladen_published():
    result = corrected_pass_rate(RG_HUMAN, RG_JUDGE_LABELED, RG_JUDGE_UNLABELED)
    assert result["tpr"] == RG_EXPECTED["tpr"]  # exact: counts of 8 give eighths, exact in floating point
    assert result["tnr"] == RG_EXPECTED["tnr"]
    assert result["raw"]["value"] == RG_EXPECTED["p_observed"]
    assert result["corrected"]["value"] == pytest.approx(RG_EXPECTED["theta_corrected"], abs=1e-15)
    assert rogan_gladen(0.625, tpr=0.75, tnr=0.75) == pytest.approx(RG_EXPECTED["theta_corrected"], abs=1e-15)


# Prediction-powered inference, ppi_py ppi_mean_ci; alpha = 0.1 (90% interval), z-interval, np.std ddof = 0.
PPI_Y = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1]
PPI_YHAT = [1, 0, 1, 0, 0, 1, 1, 1, 1, 1]
PPI_YHAT_UNLABELED = [1, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1]


PPI_CASES = [
    (1.0, 0.75, (0.46808629, 1.03191371), 1.0),           # ppi_py lambda = 1
    (0.0, 0.7, (0.46163806, 0.93836194), 0.0),            # ppi_py lambda = 0
    (None, 0.718125, (0.50355849, 0.93269151), 0.3625),   # ppi_py power tuning
]


@pytest.mark.parametrize("lam, estimate, ci, expected_lambda", PPI_CASES)
def test_ppi_mean_published(lam, estimate, ci, expected_lambda):
    result = ppi_mean(PPI_Y, PPI_YHAT, PPI_YHAT_UNLABELED, lam=lam, level=0.9)
    assert result["lambda"] == pytest.approx(expected_lambda, abs=1e-12)
    assert result["estimate"] == pytest.approx(estimate, abs=1e-12)
    assert result["ci_low"] == pytest.approx(ci[0], abs=5e-9)
    assert result["ci_high"] == pytest.approx(ci[1], abs=5e-9)


# tau-bench: pass^k = mean over tasks of C(c,k)/C(n,k); pass@k = 1 - C(n-c,k)/C(n,k); n = 5, c = 3
PASS_K = {"pass_hat_1": 0.6, "pass_hat_2": 0.3, "pass_hat_3": 0.1, "pass_at_2": 0.9}


def test_pass_hat_k_published():
    assert pass_hat_k(5, 3, 1) == pytest.approx(PASS_K["pass_hat_1"], abs=1e-15)
    assert pass_hat_k(5, 3, 2) == pytest.approx(PASS_K["pass_hat_2"], abs=1e-15)
    assert pass_hat_k(5, 3, 3) == pytest.approx(PASS_K["pass_hat_3"], abs=1e-15)
    assert pass_at_k(5, 3, 2) == pytest.approx(PASS_K["pass_at_2"], abs=1e-15)


def _nan_for_null(rows):
    return [[nan if v is None else v for v in row] for row in rows]


@pytest.mark.skipif(not VECTORS.is_file(), reason="../shared/reference/vectors.json is not present")
def test_the_copies_here_are_the_shared_reference_file():
    """Every input and expected value above is the one in ../shared/reference/vectors.json: the same float, so a
    reference that moves in the file (by 1%, or by its last digit) fails here and is copied again on purpose."""
    ref = json.loads(VECTORS.read_text(encoding="utf-8"))
    got = {
        "krippendorff_alpha": [(_nan_for_null(e["reliability_data"]), e["level"], e["expected"])
                               for e in ref["krippendorff_alpha"]],
        "cohen_kappa": [(e["y1"], e["y2"], e["weights"], e["expected"]) for e in ref["cohen_kappa"]],
        "contingency_3x3": (ref["contingency_3x3"]["table"], ref["contingency_3x3"]["expected"]),
        "stuart_maxwell": (ref["stuart_maxwell"]["table"], ref["stuart_maxwell"]["expected"]),
        "bowker_symmetry": (ref["bowker_symmetry"]["table"], ref["bowker_symmetry"]["expected"]),
        "mcnemar": (ref["mcnemar"]["table"], ref["mcnemar"]["expected"]),
        "rogan_gladen": ([ref["rogan_gladen"][k] for k in ("human", "judge_on_labeled", "judge_on_unlabeled")],
                         ref["rogan_gladen"]["expected"]),
        "ppi_mean": ([ref["ppi_mean"][k] for k in ("Y", "Yhat", "Yhat_unlabeled")], ref["ppi_mean"]["expected"]),
        "pass_hat_k": ((ref["pass_hat_k"]["n"], ref["pass_hat_k"]["c"]), ref["pass_hat_k"]["expected"]),
    }
    weights = {"cohen_kappa": None, "cohen_kappa_linear": "linear", "cohen_kappa_quadratic": "quadratic"}
    kinds = ("identity", "linear", "quadratic")
    gwet = {"cohen_kappa": dict(zip(kinds, (v for _, v in GWET_METRICS[:3]))),
            "gwet_ac1_ac2": dict(zip(kinds, (v for _, v in GWET_AC))),
            "krippendorff_alpha": dict(zip(kinds, (v for _, v in GWET_ALPHA)))}
    (lam1, lam0, auto) = PPI_CASES
    ppi = {"lambda_1": {"estimate": lam1[1], "ci": lam1[2]}, "lambda_0": {"estimate": lam0[1], "ci": lam0[2]},
           "lambda_auto": {"lambda": auto[3], "estimate": auto[1], "ci": auto[2]}}
    here = {
        "krippendorff_alpha": KRIPPENDORFF_CASES,
        "cohen_kappa": [(y1, y2, weights[name], expected) for y1, y2, _, name, expected in KAPPA_CASES],
        "contingency_3x3": (GWET_3X3.tolist(), gwet),
        "stuart_maxwell": (STUART, STUART_MAXWELL),
        "bowker_symmetry": (STUART, BOWKER),
        "mcnemar": (MCNEMAR, MCNEMAR_EXPECTED),
        "rogan_gladen": ([RG_HUMAN, RG_JUDGE_LABELED, RG_JUDGE_UNLABELED], RG_EXPECTED),
        "ppi_mean": ([PPI_Y, PPI_YHAT, PPI_YHAT_UNLABELED], ppi),
        "pass_hat_k": ((5, 3), PASS_K),
    }
    assert GWET_METRICS[3][1] == GWET_AC[1][1]  # gwet_ac2_linear is the file's AC2 with linear weights
    for key in here:
        # as JSON text: the same floats digit for digit, and nan in the same places (which == cannot compare)
        assert json.dumps(here[key], sort_keys=True) == json.dumps(got[key], sort_keys=True), key
