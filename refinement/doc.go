// Package refinement turns a round's verdicts into knowledge and new work:
// the failure taxonomy, construct features, per-category statistics with
// confidence intervals, long-tail selection, resynthesis of targeted tasks,
// resampling weights and round reports. It implements the refinement loop
// of the C->x86 seed paper (section 3.2: analyse the failing samples,
// categorise them, synthesise ten times more similar samples, resample,
// repeat) and the failure analysis of CASS (appendix A.6: failures by
// operation type).
//
// Refinement knows no lane: each lane kit (tools/<lane>) supplies its
// [LaneRules] (taxonomy rules, suspicion check, feature table, task
// identity, resynthesis format), and [NewLanes] puts them together; a nil
// or [Generic] *Lanes has the generic, class-level rules only.
//
// # Pieces
//
//   - Taxonomy ([Taxonomy]): lane-keyed tables of rules map a
//     verdict's class, stage and diagnostic lines to a fine label
//     (asm.suffix, link.undefined_symbol, crash.segv, wrong.numeric, ...);
//     a per-lane hook flags answers that sidestep the task
//     ([LabelSuspectedCheating]).
//   - Features ([Featurizer]): lane-keyed tables of patterns
//     over the task's source (comments and literals stripped) name the
//     constructs it uses (loop, switch_many, float_const, recursion; for
//     CUDA atomics, __syncthreads, shared memory, warp intrinsics, ...).
//   - Verdict labels ([Labeler], [Lanes.Labeler]): the fine label, features,
//     categories and domain of a verdict, computed when the engine stores
//     it and kept in runs.Verdict.Labels. [Taxonomy.ClassifyResult],
//     [Featurizer.FeaturesOf] and so everything built on them (statistics,
//     examples, reports) read the stored labels when a verdict has them
//     and compute them for older verdicts; [ByDomain] groups by domain.
//   - Statistics ([Stats], [StatsBy], [StatsByRound]): counts by outcome
//     (runs.Verdict.Outcome), pass rates over judged results (pass and
//     fail; pending results and task faults apart, never a pass or a fail,
//     and no rate where nothing is judged) with 95% Wilson intervals,
//     classes, fine labels, tokens and time, per category, feature, label
//     or round.
//   - Selection ([Select], [Policy]): categories whose Wilson upper bound
//     is below the threshold, under-sampled ones, and forced ones, each
//     with a one-line reason.
//   - Resynthesis ([ExamplesFor], [Lanes.BuildSynthPrompt],
//     [Lanes.ParseSynthesized], [Screen]): a prompt per chosen category
//     built from failing examples (the lane's templates), the
//     synthesiser's reply parsed into candidates by the lane's parser with
//     a reason for each rejected block, duplicates dropped by normalised
//     identity hash ([Lanes.SourceHash]), the rest checked by a
//     [Validator] that the caller supplies (a [Preparer] also completes
//     the candidate with what its tools make, such as a kernel's PTX).
//   - Resampling ([Mix], [Plateau]): next-round category weights for
//     prompts.Sample, and the stop rule.
//   - Reports ([BuildReport], [WriteSVG]): per-round figures with lift and
//     its interval, choices and cost, JSON-ready, and an SVG chart.
//
// Everything here is pure computation over runs types: no I/O except the
// lanes' templates and the Validator the caller passes, no goroutines
// except Screen's bounded validations. Compiled tables are immutable.
package refinement
