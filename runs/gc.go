package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// DefaultGCMinAge is the grace period kiln gc uses unless told otherwise:
// an unreferenced blob younger than this is kept. It must exceed the
// longest time between a blob's Put and the commit of the record that
// refers to it (a verification's artifacts are put just before Finish or
// AddRescore; a resynthesis prompt is put before the model call whose
// reply is saved with it in the round draft).
const DefaultGCMinAge = time.Hour

// GCOptions choose what [Store.GC] does.
type GCOptions struct {
	// MinAge is the grace period: a blob whose file was written (or put
	// again) less than MinAge ago is kept even when no record refers to
	// it, because a running campaign may be about to commit the record
	// that does. Zero keeps nothing unreferenced: only safe when no kiln
	// process writes to the store. Negative is an error.
	MinAge time.Duration
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
}

// GCReport says what [Store.GC] found and removed (with DryRun: would
// remove). Blob counts are files; bytes are their sizes.
type GCReport struct {
	DryRun bool `json:"dry_run"`
	// Blobs and Bytes are every blob stored when GC looked.
	Blobs int   `json:"blobs"`
	Bytes int64 `json:"bytes"`
	// Live blobs are referenced by a record (see Store.GC).
	Live      int   `json:"live"`
	LiveBytes int64 `json:"live_bytes"`
	// Young blobs are unreferenced but younger than MinAge: kept.
	Young      int   `json:"young"`
	YoungBytes int64 `json:"young_bytes"`
	// Removed blobs were unreferenced and older than MinAge.
	Removed      int   `json:"removed"`
	RemovedBytes int64 `json:"removed_bytes"`
	// Completed counts the removed blobs that only superseded pending
	// verdict revisions referred to: executables and other inputs kept
	// for a pending run that a later revision completed.
	Completed      int   `json:"completed"`
	CompletedBytes int64 `json:"completed_bytes"`
	// Dirs counts the empty fan-out folders removed.
	Dirs int `json:"dirs_removed"`
	// Missing counts blob names live records refer to that are not stored
	// (a damaged store; GC changes nothing about them).
	Missing int `json:"missing"`
	// Other counts files in the blob directory that are not blobs at
	// their place (temp files of writers, strangers): left alone.
	Other int `json:"other"`
}

// GC removes the blobs that no stored record refers to and that are older
// than opt.MinAge, and the fan-out folders left empty.
//
// # Live set
//
// A blob is live when its name is
//
//   - an artifact of the latest verdict revision of an attempt;
//   - an artifact of a superseded revision, unless that revision was
//     pending (it passed every stage that ran and left stages for another
//     host) and a later revision of the same attempt is not pending: the
//     pending run was completed (kiln rescore --pending) or judged again in
//     full, so the executables and inputs kept only for it (cuda-synth's
//     cuda_binary, hip_nvidia_binary and gpu_probe_binary) have no reader
//     left. Every other superseded revision keeps its artifacts: history
//     is not garbage;
//   - any JSON string in a round record (resynthesis prompts and replies;
//     the record is the caller's JSON, so any string that is a blob name
//     counts);
//   - a value of a task's files or meta that is a blob name.
//
// Forked campaigns hold verdict rows of their own, so what they copied
// stays live. The live set is read in one read transaction.
//
// # Running campaigns
//
// A campaign puts a blob before it commits the record that refers to it.
// GC is safe against that because (1) the cutoff (now - MinAge) is taken
// before the live set is read, so a blob older than the cutoff whose record
// was committed within MinAge of its Put is seen as live; (2) Put of
// content already stored refreshes the file's modification time, so an
// old unreferenced blob that a campaign puts again is young; and (3) GC
// checks the age again and deletes under the blob store's exclusive lock,
// which Put holds shared, so a Put of the same content happens entirely
// before the deletion (GC sees it young) or after it (Put writes the file
// anew). GC is thus correct as long as no record is committed more than
// MinAge after the Put of a blob it names.
func (s *Store) GC(ctx context.Context, opt GCOptions) (GCReport, error) {
	rep := GCReport{DryRun: opt.DryRun}
	if opt.MinAge < 0 {
		return rep, fmt.Errorf("gc: negative minimum age %s", opt.MinAge)
	}
	cutoff := time.Now().Add(-opt.MinAge)
	live, released, err := s.liveBlobs(ctx)
	if err != nil {
		return rep, fmt.Errorf("gc: %w", err)
	}
	seen := map[string]bool{}
	shards, err := os.ReadDir(s.blobs.dir)
	if err != nil {
		return rep, fmt.Errorf("gc: %w", err)
	}
	for _, sh := range shards {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if !sh.IsDir() || !isShard(sh.Name()) {
			if sh.Name() != lockFile {
				rep.Other++
			}
			continue
		}
		if err := s.gcShard(sh.Name(), cutoff, opt.DryRun, live, released, seen, &rep); err != nil {
			return rep, fmt.Errorf("gc: %w", err)
		}
	}
	for h := range live {
		if !seen[h] {
			rep.Missing++
		}
	}
	s.log.Info("blob gc", "dry_run", opt.DryRun, "blobs", rep.Blobs, "live", rep.Live, "young", rep.Young,
		"removed", rep.Removed, "removed_bytes", rep.RemovedBytes, "dirs", rep.Dirs, "missing", rep.Missing)
	return rep, nil
}

// isShard reports whether name is a fan-out folder name (two lowercase hex
// digits).
func isShard(name string) bool {
	return len(name) == 2 && isHexDigit(name[0]) && isHexDigit(name[1])
}

func isHexDigit(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// gcShard classifies the files of one fan-out folder and removes its
// garbage (and the folder, if that empties it) under the exclusive lock.
func (s *Store) gcShard(shard string, cutoff time.Time, dryRun bool, live, released map[string]bool,
	seen map[string]bool, rep *GCReport) error {
	dir := filepath.Join(s.blobs.dir, shard)
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed by another GC
		}
		return err
	}
	type file struct {
		name string
		size int64
	}
	var garbage []file
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !validHash(name) || name[:2] != shard {
			rep.Other++
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		seen[name] = true
		rep.Blobs++
		rep.Bytes += info.Size()
		switch {
		case live[name]:
			rep.Live++
			rep.LiveBytes += info.Size()
		case !info.ModTime().Before(cutoff):
			rep.Young++
			rep.YoungBytes += info.Size()
		default:
			garbage = append(garbage, file{name, info.Size()})
		}
	}
	if dryRun {
		for _, f := range garbage {
			rep.count(f.name, f.size, released)
		}
		if len(garbage) == len(ents) {
			rep.Dirs++
		}
		return nil
	}
	unlock, err := s.blobs.lock(true)
	if err != nil {
		return err
	}
	defer unlock()
	for _, f := range garbage {
		name := f.name
		p := filepath.Join(dir, name)
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !info.ModTime().Before(cutoff) {
			// Put again since we looked: about to be referenced.
			rep.Young++
			rep.YoungBytes += info.Size()
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		rep.count(name, info.Size(), released)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(left) == 0 {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		rep.Dirs++
	}
	return nil
}

func (rep *GCReport) count(name string, size int64, released map[string]bool) {
	rep.Removed++
	rep.RemovedBytes += size
	if released[name] {
		rep.Completed++
		rep.CompletedBytes += size
	}
}

// liveBlobs reads, in one read transaction, the blob names records refer
// to (live) and those that only superseded pending revisions completed
// later refer to (released, not live). See GC.
func (s *Store) liveBlobs(ctx context.Context) (live, released map[string]bool, err error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback()
	live, released = map[string]bool{}, map[string]bool{}
	if err := verdictBlobs(ctx, tx, live, released); err != nil {
		return nil, nil, fmt.Errorf("verdict artifacts: %w", err)
	}
	for h := range live {
		delete(released, h)
	}
	// Strings in round records, task files and meta values that are blob
	// names (the JSON is the callers'; runs does not know their fields).
	for _, q := range []string{
		`SELECT j.value FROM rounds r, json_tree(r.record) j WHERE j.type = 'text' AND length(j.value) = 64`,
		`SELECT j.value FROM tasks t, json_each(t.files) j WHERE j.type = 'text' AND length(j.value) = 64`,
		`SELECT j.value FROM tasks t, json_each(t.meta) j WHERE j.type = 'text' AND length(j.value) = 64`,
	} {
		if err := collectHashes(ctx, tx, q, live, released); err != nil {
			return nil, nil, fmt.Errorf("records: %w", err)
		}
	}
	return live, released, tx.Commit()
}

// revArtifacts is what the live set needs of one verdict revision.
type revArtifacts struct {
	pending   bool
	artifacts map[string]string
}

// verdictBlobs adds the artifacts of every verdict revision to live, or to
// released for a pending revision that a later non-pending revision of the
// same attempt superseded.
func verdictBlobs(ctx context.Context, tx *sql.Tx, live, released map[string]bool) error {
	rows, err := tx.QueryContext(ctx, `SELECT attempt_id, pass, stages, artifacts FROM verdicts
		ORDER BY attempt_id, revision`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		cur  string
		revs []revArtifacts
	)
	flush := func() {
		// A pending revision is released when a later revision is not
		// pending.
		completedAfter := make([]bool, len(revs))
		for i := len(revs) - 2; i >= 0; i-- {
			completedAfter[i] = completedAfter[i+1] || !revs[i+1].pending
		}
		for i, r := range revs {
			to := live
			if r.pending && completedAfter[i] {
				to = released
			}
			for _, h := range r.artifacts {
				if validHash(h) {
					to[h] = true
				}
			}
		}
		revs = revs[:0]
	}
	for rows.Next() {
		var (
			attempt, arts string
			pass          bool
			stages        sql.NullString
		)
		if err := rows.Scan(&attempt, &pass, &stages, &arts); err != nil {
			return err
		}
		if attempt != cur {
			flush()
			cur = attempt
		}
		r := revArtifacts{pending: pass && StagesPending(rawBytes(stages))}
		if err := unmarshalText(arts, &r.artifacts); err != nil {
			return fmt.Errorf("attempt %s: artifacts: %w", attempt, err)
		}
		revs = append(revs, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	flush()
	return nil
}

// collectHashes adds to live the values query returns that are blob names.
func collectHashes(ctx context.Context, tx *sql.Tx, query string, live, released map[string]bool) error {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return err
		}
		if validHash(h) {
			live[h] = true
			delete(released, h)
		}
	}
	return rows.Err()
}
