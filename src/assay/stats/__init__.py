"""Statistics for agent evaluations: pure functions over numbers (numpy + stdlib only).

- intervals: Wilson interval, binomial SE; clustered: task-clustered SE of a mean;
  bootstrap: percentile bootstrap (optionally resampling whole tasks); passk: pass@k/pass^k.
- paired / proportions: McNemar, paired bootstrap, sign-flip test, differences of rates
  with intervals, non-inferiority tests.
- multiplicity, power, sequential: adjusting p-values, planning, stopping early.
- agreement: raw agreement, confusion matrix, Cohen's kappa, Spearman's rho.
- ranking, rating_analysis: Elo, Bradley–Terry, bootstrap intervals, win matrices, windows.

See docs/statistics.md and docs/rankings.md.
"""

from .agreement import cohen_kappa, confusion_matrix, rank_average, raw_agreement, spearman_rho
from .bootstrap import BootstrapCI, bootstrap_ci, bootstrap_means, cluster_bootstrap_ci, group_by_cluster
from .clustered import ClusteredMean, RateInterval, clustered_mean, clustered_rate_interval, clustered_se
from .intervals import binomial_se, wilson_bounds, wilson_interval
from .multiplicity import adjust_pvalues, familywise_error_rate
from .paired import (
    PermutationResult,
    mcnemar_exact,
    paired_differences,
    paired_mean_difference,
    sign_flip_test,
)
from .passk import pass_at_k, pass_at_k_rate, pass_hat_k, pass_hat_k_rate
from .power import (
    mde_mcnemar,
    mde_two_proportions,
    power_mcnemar,
    power_two_proportions,
    sample_size_mcnemar,
    sample_size_two_proportions,
)
from .proportions import (
    DifferenceCI,
    TestResult,
    diff_proportions_paired,
    diff_proportions_unpaired,
    noninferiority_paired,
    noninferiority_unpaired,
    paired_counts,
)
from .ranking import bradley_terry, elo_online, expected_win_rate, parse_battles, win_counts
from .rating_analysis import (
    RatingsBootstrap,
    RatingSnapshot,
    WinMatrix,
    bootstrap_ratings,
    expected_win_matrix,
    observed_win_matrix,
    period_end,
    ratings_over_time,
)
from .sequential import (
    AlwaysValidResult,
    SPRTResult,
    discordant_mixture_log_lr,
    discordant_msprt,
    msprt_mean,
    sprt_bernoulli,
    sprt_bernoulli_path,
)

__all__ = [
    "AlwaysValidResult",
    "BootstrapCI",
    "ClusteredMean",
    "DifferenceCI",
    "PermutationResult",
    "RateInterval",
    "RatingSnapshot",
    "RatingsBootstrap",
    "SPRTResult",
    "TestResult",
    "WinMatrix",
    "adjust_pvalues",
    "binomial_se",
    "bootstrap_ci",
    "bootstrap_means",
    "bootstrap_ratings",
    "bradley_terry",
    "cluster_bootstrap_ci",
    "clustered_mean",
    "clustered_rate_interval",
    "clustered_se",
    "cohen_kappa",
    "confusion_matrix",
    "diff_proportions_paired",
    "diff_proportions_unpaired",
    "discordant_mixture_log_lr",
    "discordant_msprt",
    "elo_online",
    "expected_win_matrix",
    "expected_win_rate",
    "familywise_error_rate",
    "group_by_cluster",
    "mcnemar_exact",
    "mde_mcnemar",
    "mde_two_proportions",
    "msprt_mean",
    "noninferiority_paired",
    "noninferiority_unpaired",
    "observed_win_matrix",
    "paired_counts",
    "paired_differences",
    "paired_mean_difference",
    "parse_battles",
    "pass_at_k",
    "pass_at_k_rate",
    "pass_hat_k",
    "pass_hat_k_rate",
    "period_end",
    "power_mcnemar",
    "power_two_proportions",
    "rank_average",
    "ratings_over_time",
    "raw_agreement",
    "sample_size_mcnemar",
    "sample_size_two_proportions",
    "sign_flip_test",
    "spearman_rho",
    "sprt_bernoulli",
    "sprt_bernoulli_path",
    "wilson_bounds",
    "wilson_interval",
    "win_counts",
]
