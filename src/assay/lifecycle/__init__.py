"""The golden-set lifecycle: what happens between runs (docs/lifecycle.md).

- badcases (:mod:`.badcase`, :mod:`.clustering`, :mod:`.propose`): failures recorded with
  redacted evidence, a phenomenon, a layer and a root cause; proposed from a run by
  clustering its failed trials;
- flow-back and versions (:mod:`.flowback`, :mod:`.duplicates`, :mod:`.versions`): a
  badcase becomes a candidate regression task, is reviewed and accepted, the suite's
  version bumps and ``assay suite diff`` shows what changed;
- holdout discipline (:mod:`.holdout`): how often the holdout has been looked at;
- perturbations (:mod:`.metamorphic`): metamorphic relations checked against the
  unperturbed run;
- snapshot vs probe tracks (:mod:`.tracks`);
- rollout experiments (:mod:`.factorial`): flag matrices, main effects, interactions.

A layer between ``runner`` (whose runs it reads) and ``compare``.
"""
