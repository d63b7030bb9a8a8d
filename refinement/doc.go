// Package refinement turns a round's verdicts into knowledge and new work:
// the failure taxonomy, construct features, per-category statistics with
// confidence intervals, long-tail selection, resynthesis of targeted tasks,
// resampling weights and round reports. It implements the refinement loop
// of the C->x86 seed paper (section 3.2: analyse the failing samples,
// categorise them, synthesise ten times more similar samples, resample,
// repeat) and the failure analysis of CASS (appendix A.6: failures by
// operation type).
//
// # Pieces
//
//   - Taxonomy ([Classify], [Taxonomy]): lane-keyed tables of rules map a
//     verdict's class, stage and diagnostic lines to a fine label
//     (asm.suffix, link.undefined_symbol, crash.segv, wrong.numeric, ...);
//     a per-lane hook flags answers that sidestep the task
//     ([LabelSuspectedCheating]).
//   - Features ([Features], [Featurizer]): lane-keyed tables of patterns
//     over the task's source (comments and literals stripped) name the
//     constructs it uses (loop, switch_many, float_const, recursion; for
//     CUDA atomics, __syncthreads, shared memory, warp intrinsics, ...).
//   - Verdict labels ([Labeler], [LabelsOf]): the fine label, features,
//     categories and domain of a verdict, computed when the engine stores
//     it and kept in runs.Verdict.Labels. [Taxonomy.ClassifyResult],
//     [Featurizer.FeaturesOf] and so everything built on them (statistics,
//     examples, reports) read the stored labels when a verdict has them
//     and compute them for older verdicts; [ByDomain] groups by domain.
//   - Statistics ([Stats], [StatsBy], [StatsByRound]): counts, pass rates
//     with 95% Wilson intervals, classes, fine labels, tokens and time, per
//     category, feature, label or round.
//   - Selection ([Select], [Policy]): categories whose Wilson upper bound
//     is below the threshold, under-sampled ones, and forced ones, each
//     with a one-line reason.
//   - Resynthesis ([ExamplesFor], [BuildSynthPrompt], [ParseSynthesized],
//     [Screen]): a prompt per chosen category built from failing examples
//     (templates in data/, embedded), the synthesiser's reply parsed into
//     candidates with a reason for each rejected block, duplicates dropped
//     by normalised source hash, the rest checked by a [Validator] that
//     the caller supplies. A c2x86 candidate is a function and its driver;
//     a cuda-synth candidate is a task statement (its prompt) with the
//     synthesiser's reference program ([ReferenceFile]) for the validator
//     to compile, and is deduplicated by its statement.
//   - Resampling ([Mix], [Plateau]): next-round category weights for
//     prompts.Sample, and the stop rule.
//   - Reports ([BuildReport], [WriteSVG]): per-round figures with lift and
//     its interval, choices and cost, JSON-ready, and an SVG chart.
//
// Everything here is pure computation over runs types: no I/O except the
// embedded templates and the Validator the caller passes, no goroutines
// except Screen's bounded validations. The built-in tables are built once
// and immutable afterwards.
package refinement
