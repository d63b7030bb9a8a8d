package runs

// schemaV1 is migration 1, the store's first schema: campaigns, tasks,
// attempts, verdicts, rounds. Never edit it: append a migration.
const schemaV1 = `
CREATE TABLE campaigns (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	lane       TEXT NOT NULL,
	spec       BLOB,
	spec_dir   TEXT NOT NULL DEFAULT '',
	parent     TEXT NOT NULL DEFAULT '',
	state      TEXT NOT NULL CHECK (state IN ('queued','running','cancelled','done','failed')),
	round      INTEGER NOT NULL DEFAULT 0 CHECK (round >= 0),
	note       TEXT NOT NULL DEFAULT '',
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX campaigns_name ON campaigns (name, created_at);

CREATE TABLE tasks (
	seq               INTEGER PRIMARY KEY AUTOINCREMENT,
	id                TEXT NOT NULL UNIQUE,
	campaign_id       TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
	round             INTEGER NOT NULL CHECK (round >= 0),
	key               TEXT NOT NULL CHECK (key <> ''),
	lane              TEXT NOT NULL,
	files             TEXT NOT NULL,
	meta              TEXT NOT NULL,
	categories        TEXT NOT NULL,
	prompt            TEXT NOT NULL DEFAULT '',
	state             TEXT NOT NULL CHECK (state IN ('queued','leased','done')),
	leases            INTEGER NOT NULL DEFAULT 0,
	lease_worker      TEXT,
	lease_expires     TEXT,
	judged_attempt_id TEXT REFERENCES attempts (id),
	created_at        TEXT NOT NULL,
	done_at           TEXT,
	UNIQUE (campaign_id, key),
	CHECK ((state = 'leased') = (lease_expires IS NOT NULL)),
	CHECK ((state = 'done') = (judged_attempt_id IS NOT NULL))
) STRICT;
CREATE INDEX tasks_claim ON tasks (campaign_id, state, seq);

CREATE TABLE attempts (
	seq               INTEGER PRIMARY KEY AUTOINCREMENT,
	id                TEXT NOT NULL UNIQUE,
	task_id           TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	number            INTEGER NOT NULL CHECK (number > 0),
	endpoint          TEXT NOT NULL,
	model             TEXT NOT NULL,
	answer            TEXT NOT NULL,
	transcript        TEXT,
	prompt_tokens     INTEGER NOT NULL,
	completion_tokens INTEGER NOT NULL,
	reasoning_tokens  INTEGER NOT NULL,
	prompt_source     TEXT NOT NULL,
	completion_source TEXT NOT NULL,
	reasoning_source  TEXT NOT NULL,
	latency_ms        INTEGER NOT NULL,
	ttft_ms           INTEGER NOT NULL,
	calls             INTEGER NOT NULL,
	turns             INTEGER NOT NULL,
	tool_calls        INTEGER NOT NULL,
	repair_turns      INTEGER NOT NULL,
	error             TEXT NOT NULL,
	started_at        TEXT,
	finished_at       TEXT,
	saved_at          TEXT NOT NULL,
	UNIQUE (task_id, number)
) STRICT;

CREATE TABLE verdicts (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	id           TEXT NOT NULL UNIQUE,
	attempt_id   TEXT NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
	task_id      TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	revision     INTEGER NOT NULL CHECK (revision >= 0),
	pass         INTEGER NOT NULL CHECK (pass IN (0, 1)),
	class        TEXT NOT NULL,
	stage        TEXT NOT NULL,
	stages       TEXT,
	diagnostic   TEXT NOT NULL,
	measurements TEXT NOT NULL,
	artifacts    TEXT NOT NULL,
	toolchain    TEXT NOT NULL,
	policy       TEXT NOT NULL,
	created_at   TEXT NOT NULL,
	UNIQUE (attempt_id, revision)
) STRICT;
-- A task is judged once: at most one original verdict per task.
CREATE UNIQUE INDEX verdicts_task_original ON verdicts (task_id) WHERE revision = 0;

-- What a refinement campaign decided after each round: a draft while the
-- next round is being prepared, final once it started (or the campaign
-- stopped). The record is the caller's JSON.
CREATE TABLE rounds (
	campaign_id TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
	round       INTEGER NOT NULL CHECK (round >= 0),
	final       INTEGER NOT NULL CHECK (final IN (0, 1)),
	record      TEXT NOT NULL,
	created_at  TEXT NOT NULL,
	updated_at  TEXT NOT NULL,
	PRIMARY KEY (campaign_id, round)
) STRICT;
`
