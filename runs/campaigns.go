package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

const campaignCols = `id, name, lane, spec, spec_dir, parent, state, round, note, created_at, updated_at`

func scanCampaign(sc scanner) (Campaign, error) {
	var (
		c                Campaign
		state            string
		created, updated sql.NullString
	)
	if err := sc.Scan(&c.ID, &c.Name, &c.Lane, &c.Spec, &c.SpecDir, &c.Parent, &state, &c.Round, &c.Note, &created, &updated); err != nil {
		return Campaign{}, err
	}
	c.State = CampaignState(state)
	var err error
	if c.CreatedAt, err = parseTime(created); err != nil {
		return Campaign{}, err
	}
	if c.UpdatedAt, err = parseTime(updated); err != nil {
		return Campaign{}, err
	}
	return c, nil
}

// CreateCampaign stores a new campaign in state queued at round 0 with a new
// id and returns it as stored. Name and Lane are required.
func (s *Store) CreateCampaign(ctx context.Context, c Campaign) (Campaign, error) {
	if c.Name == "" || c.Lane == "" {
		return Campaign{}, fmt.Errorf("create campaign: name and lane are required")
	}
	now := s.now()
	c.ID = newID()
	c.State = CampaignQueued
	c.Round = 0
	c.CreatedAt, c.UpdatedAt = now, now
	if c.Spec == nil {
		c.Spec = []byte{}
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO campaigns (`+campaignCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		c.ID, c.Name, c.Lane, c.Spec, c.SpecDir, c.Parent, string(c.State), c.Round, c.Note, fmtTime(now), fmtTime(now))
	if err != nil {
		return Campaign{}, fmt.Errorf("create campaign: %w", err)
	}
	s.log.Info("campaign created", "run", c.ID, "name", c.Name, "lane", c.Lane)
	return c, nil
}

// Campaign finds a campaign by exact id, else by exact name (the newest of
// that name), else by a unique id prefix of at least 4 characters. A prefix
// matching several campaigns gives ErrAmbiguous; nothing matching gives
// ErrNotFound.
func (s *Store) Campaign(ctx context.Context, ref string) (Campaign, error) {
	if ref == "" {
		return Campaign{}, fmt.Errorf("campaign: empty reference: %w", ErrNotFound)
	}
	c, err := scanCampaign(s.r.QueryRowContext(ctx,
		`SELECT `+campaignCols+` FROM campaigns WHERE id = ?`, ref))
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return c, wrapCampaign(ref, err)
	}
	c, err = scanCampaign(s.r.QueryRowContext(ctx,
		`SELECT `+campaignCols+` FROM campaigns WHERE name = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`, ref))
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return c, wrapCampaign(ref, err)
	}
	prefix := strings.ToLower(ref)
	if len(prefix) < 4 || strings.Trim(prefix, "0123456789abcdef-") != "" {
		return Campaign{}, wrapCampaign(ref, ErrNotFound)
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT `+campaignCols+` FROM campaigns WHERE id >= ? AND id < ? ORDER BY created_at LIMIT 6`,
		prefix, prefix+"\x7f")
	if err != nil {
		return Campaign{}, wrapCampaign(ref, err)
	}
	defer rows.Close()
	var found []Campaign
	for rows.Next() {
		c, err := scanCampaign(rows)
		if err != nil {
			return Campaign{}, wrapCampaign(ref, err)
		}
		found = append(found, c)
	}
	if err := rows.Err(); err != nil {
		return Campaign{}, wrapCampaign(ref, err)
	}
	switch len(found) {
	case 0:
		return Campaign{}, wrapCampaign(ref, ErrNotFound)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, c := range found {
		ids[i] = c.ID
	}
	return Campaign{}, fmt.Errorf("campaign %q: %w (matches %s)", ref, ErrAmbiguous, strings.Join(ids, ", "))
}

func wrapCampaign(ref string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("campaign %q: %w", ref, notFound(err))
}

// ListCampaigns returns every campaign, newest first.
func (s *Store) ListCampaigns(ctx context.Context) ([]Campaign, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+campaignCols+` FROM campaigns ORDER BY created_at DESC, rowid DESC`)
	if err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	defer rows.Close()
	var out []Campaign
	for rows.Next() {
		c, err := scanCampaign(rows)
		if err != nil {
			return nil, fmt.Errorf("list campaigns: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	return out, nil
}

// SetCampaignState moves campaign id to st and sets its note. The change is
// made only if the transition is allowed (see the package doc); otherwise the
// error is a *TransitionError (errors.Is ErrBadTransition). An unknown id gives
// ErrNotFound.
func (s *Store) SetCampaignState(ctx context.Context, id string, st CampaignState, note string) error {
	from := campaignFrom(st)
	if from == nil {
		return fmt.Errorf("set campaign state: unknown state %q", st)
	}
	args := []any{string(st), note, fmtTime(s.now()), id}
	marks := make([]string, len(from))
	for i, f := range from {
		marks[i] = "?"
		args = append(args, string(f))
	}
	res, err := s.w.ExecContext(ctx, `UPDATE campaigns SET state = ?, note = ?, updated_at = ?
		WHERE id = ? AND state IN (`+strings.Join(marks, ",")+`)`, args...)
	if err != nil {
		return fmt.Errorf("set campaign state: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set campaign state: %w", err)
	} else if n == 1 {
		s.log.Info("campaign state", "run", id, "state", string(st), "note", note)
		return nil
	}
	var cur string
	err = s.r.QueryRowContext(ctx, `SELECT state FROM campaigns WHERE id = ?`, id).Scan(&cur)
	if err != nil {
		return fmt.Errorf("set campaign state %s: %w", id, notFound(err))
	}
	return &TransitionError{ID: id, From: CampaignState(cur), To: st}
}

// SetCampaignRound records the campaign's current round.
func (s *Store) SetCampaignRound(ctx context.Context, id string, round int) error {
	if round < 0 {
		return fmt.Errorf("set campaign round: negative round %d", round)
	}
	res, err := s.w.ExecContext(ctx, `UPDATE campaigns SET round = ?, updated_at = ? WHERE id = ?`,
		round, fmtTime(s.now()), id)
	if err != nil {
		return fmt.Errorf("set campaign round: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set campaign round: %w", err)
	} else if n == 0 {
		return fmt.Errorf("set campaign round %s: %w", id, ErrNotFound)
	}
	return nil
}
