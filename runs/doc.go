// Package runs is kiln's system of record: campaigns, their rounds of tasks,
// the attempts models make at tasks and the verdicts that judge them, kept in
// SQLite (modernc.org/sqlite, no cgo), plus a content-addressed blob store and
// the JSONL export of judged samples.
//
// # Storage
//
// [Open] keeps everything under one directory: dir/kiln.db (WAL journal,
// synchronous=FULL, foreign keys on, busy_timeout) and dir/blobs. All writes
// go through a single connection whose transactions begin IMMEDIATE, so
// writers queue in the process instead of failing with SQLITE_BUSY; reads
// use a separate query_only pool and see the last committed state. The
// schema is migrated at Open (table schema_version): a database made by an
// older kiln is brought up to date in place (version 2 added the verdicts'
// labels column; older verdicts keep NULL labels). Timestamps are UTC,
// stored as fixed-width RFC 3339 text; JSON fields are TEXT.
//
// # Campaign states
//
//	  +-------------- resume ---------------+
//	  v                                     |
//	queued --start--> running --error--> failed
//	  |  ^              |  |
//	  |  +----stop------+  +--finish--> done
//	  |                 |
//	  +-----------------+--cancel--> cancelled
//	  (and queued --error--> failed)
//
//	queued    -> running, cancelled, failed, queued
//	running   -> done, failed, cancelled, queued (daemon stop), running (note)
//	failed    -> queued (resume), failed (note)
//	done, cancelled: terminal
//
// [Store.SetCampaignState] applies a change only where the current state is
// one of the allowed sources (the check is the UPDATE's WHERE clause), else
// it returns a *[TransitionError].
//
// # Task states and leases
//
//	AddTasks
//	   |
//	   v       Claim (leases++)
//	queued ------------------> leased ---- Finish ----> done
//	   ^                      |   ^  |
//	   +--- Release ----------+   |  | Renew (same lease)
//	   +--- ReclaimAll -------+   +--+ Claim after expiry (leases++)
//
// Every Claim increments the task's lease count; the new count is the
// lease's (and the attempt's) Number. A lease is current while the task is
// leased and its count still equals Number: a worker whose lease expired and
// was claimed by another gets [ErrLeaseLost] from Renew, SaveAnswer, Finish
// and Release. Every such change is an UPDATE conditioned on
// state='leased' AND leases=Number. Finish is one transaction (attempt,
// task done, verdict revision 0 with its labels) and a unique index allows one revision-0
// verdict per task, so a task is judged exactly once.
//
// # Attempt lifecycle
//
//	(lease) --SaveAnswer--> saved --Finish--> judged (verdict rev 0) --AddRescore--> rescored (rev n)
//
// SaveAnswer makes the model's answer durable before verification starts;
// an attempt whose lease was lost stays saved, unjudged (its tokens still
// count in [Counts]). Rescores never change the original verdict; readers
// ([Store.Results], [Store.Export], Pass/Fail in [Counts]) use the latest
// revision of the judged attempt.
//
// # Outcomes
//
// Every count, rate and export reads a verdict through [Verdict.Outcome]:
// pass (passed, no stage pending), fail, pending (passed every stage that
// ran, stages left for another host) or task_fault (class reference_error:
// the task's own reference failed, so the answer was not judged). Rates
// are over judged results only, pass and fail: a pending verdict is never
// a pass, a task fault never a failure, and a set with no judged result
// has no rate. The store keeps the pass flag and the stages as the
// verifier wrote them; the tasks' outcome column holds pass, fail or
// pending, and a task fault is a fail whose class is reference_error.
//
// # Rounds and forks
//
// A campaign's tasks carry their round; the campaign's Round is its
// current one. A refinement campaign keeps one [RoundRecord] per round it
// analysed (the record's JSON is the caller's): [Store.SaveRoundDraft]
// rewrites a draft while the next round is prepared, and
// [Store.CloseRound] makes the record final, queues the next round's tasks
// and moves the campaign to the next round in one transaction, so a crash
// leaves either the round open with its draft or the next round queued.
// A final record with no next round is where the campaign stopped. A
// final record never changes ([ErrRoundClosed]).
//
// [Store.ForkCampaign] copies a campaign (its judged tasks with their
// judged attempt and latest verdict, its other tasks as queued, the
// records of its earlier rounds) into a new campaign whose Parent is the
// source: kiln refine continues a finished run that way and leaves the run
// itself untouched.
//
// # Blobs
//
// [Blobs] stores byte strings by lowercase hex SHA-256 under
// dir/blobs/<first 2 hex>/<hash>, written to a temp file, fsynced, renamed
// and the directory fsynced. Verdict artifacts refer to blobs by hash, and
// so do round records (resynthesis prompts and replies). [Store.GC] removes
// the blobs no record refers to (see its doc for the live set and why it is
// safe while a campaign runs).
//
// # Export format
//
// [Store.Export] writes JSON Lines, one [Sample] object per judged task
// (passing only, unless [ExportOptions].All; never a task fault, whose
// task's reference failed), in claim order:
//
//	schema        "kiln.sample/v1"
//	id            sample id = the judged attempt's id (stable across rescores)
//	campaign      {"id", "name"}
//	lane, round   the task's lane and round
//	task_id       task id; task_key: the campaign-unique key, e.g. "r0/item#0"
//	categories    task categories ([] if none)
//	meta          task metadata (string map)
//	files         the task's input files, name -> content
//	prompt        the rendered user prompt, when the task carried one
//	answer        the model's final answer
//	pass          verified: the verdict passed and no stage is pending
//	pending       the verdict passed every stage that ran, and stages are
//	              left for another host (a GPU run on a CPU host): not verified
//	              yet; exported only with ExportOptions.All or Pending
//	verdict       {"id","revision","pass","pending","class","stage","stages","diagnostic","labels"}:
//	              the latest revision; verdict.pass is pass (false for a
//	              pending verdict); stages is the verifier's JSON as stored;
//	              labels (absent for verdicts stored before schema version 2)
//	              {"class","diagnostic_kind","evidence","suspicion","features",
//	              "categories","domain"}: see VerdictLabels
//	attempt       {"id","number","turns","tool_calls","repair_turns","started_at","finished_at"}
//	usage         {"prompt_tokens","completion_tokens","reasoning_tokens",
//	              "prompt_source","completion_source","reasoning_source",
//	              "latency_ms","ttft_ms","calls"}
//	model, endpoint  who answered
//	toolchain     tool name -> version used by the verifier
//	policy        the verification policy name/version
//	artifacts     artifact name -> blob hash (in dir/blobs)
//	artifact_text artifact name -> content, for text artifacts (sources,
//	              assembly, outputs) when exported with texts (the CLI's
//	              default); executables stay hashes only
//	measurements  name -> number (e.g. cycles, bytes)
//	created_at    when the carried verdict revision was written (RFC 3339, UTC)
//	transcript    the attempt transcript JSON, only with ExportOptions.Transcripts
//
// kiln export's curated raw records (package runs/dataset) are these
// objects with one more field, "curation": {"item", "difficulty", "arl",
// "selected", "split", "contamination"}; the trainer formats are
// documented there.
package runs
