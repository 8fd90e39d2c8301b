"""Statistics for agent evaluations: pure functions over numbers (numpy + stdlib only).

- intervals: Wilson interval, binomial SE; clustered: task-clustered SE of a mean;
  bootstrap: percentile bootstrap (optionally resampling whole tasks); passk: pass@k/pass^k.
- paired / proportions: McNemar, paired bootstrap, sign-flip test, differences of rates
  with intervals, non-inferiority tests.
- multiplicity, power, sequential: adjusting p-values, planning, stopping early.
- agreement: raw agreement, confusion matrix, Cohen's kappa, Spearman's rho.
- quantiles: distribution-free order-statistic intervals of quantiles (latency p95).
- ranking, rating_analysis: Elo, Bradley–Terry, bootstrap intervals, win matrices, windows.

See docs/statistics.md and docs/rankings.md.
"""

from .agreement import cohen_kappa, confusion_matrix, rank_average, raw_agreement, spearman_rho
from .bootstrap import (
    BootstrapCI,
    bootstrap_ci,
    bootstrap_means,
    bootstrap_replicates,
    cluster_bootstrap_ci,
    cluster_bootstrap_means,
    group_by_cluster,
    percentile_interval,
)
from .clustered import ClusteredMean, RateInterval, clustered_mean, clustered_rate_interval, clustered_se
from .intervals import binomial_se, wilson_bounds, wilson_interval
from .multiplicity import adjust_pvalues, familywise_error_rate
from .ni_power import (
    power_noninferiority,
    power_noninferiority_paired,
    sample_size_noninferiority,
    sample_size_noninferiority_paired,
)
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
from .quantiles import QuantileCI, order_statistic_ranks, quantile_interval
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
    discordant_mixture_log_lr,
    discordant_msprt,
    msprt_mean,
)

__all__ = [
    "AlwaysValidResult",
    "BootstrapCI",
    "ClusteredMean",
    "DifferenceCI",
    "PermutationResult",
    "QuantileCI",
    "RateInterval",
    "RatingSnapshot",
    "RatingsBootstrap",
    "TestResult",
    "WinMatrix",
    "adjust_pvalues",
    "binomial_se",
    "bootstrap_ci",
    "bootstrap_means",
    "bootstrap_ratings",
    "bootstrap_replicates",
    "bradley_terry",
    "cluster_bootstrap_ci",
    "cluster_bootstrap_means",
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
    "order_statistic_ranks",
    "paired_counts",
    "paired_differences",
    "paired_mean_difference",
    "parse_battles",
    "pass_at_k",
    "pass_at_k_rate",
    "pass_hat_k",
    "pass_hat_k_rate",
    "percentile_interval",
    "period_end",
    "power_mcnemar",
    "power_noninferiority",
    "power_noninferiority_paired",
    "power_two_proportions",
    "quantile_interval",
    "rank_average",
    "ratings_over_time",
    "raw_agreement",
    "sample_size_mcnemar",
    "sample_size_noninferiority",
    "sample_size_noninferiority_paired",
    "sample_size_two_proportions",
    "sign_flip_test",
    "spearman_rho",
    "wilson_bounds",
    "wilson_interval",
    "win_counts",
]
