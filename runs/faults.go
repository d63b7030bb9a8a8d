package runs

import (
	"context"
	"errors"
	"fmt"
)

// AddFault counts one failed model call of class (agent.FaultClass: rate_limited,
// server_error, timeout, truncated, bad_response, ...) in a campaign. Counts
// are kept across restarts, so a campaign's figure covers all its runs; a
// call that was retried and then succeeded counts too.
func (s *Store) AddFault(ctx context.Context, campaignID, class string) error {
	if class == "" {
		return errors.New("add fault: empty class")
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO model_faults (campaign_id, class, n) VALUES (?, ?, 1)
		ON CONFLICT (campaign_id, class) DO UPDATE SET n = n + 1`, campaignID, class)
	if err != nil {
		return fmt.Errorf("add fault to campaign %s: %w", campaignID, err)
	}
	return nil
}

// Faults returns a campaign's failed model calls by class (empty when none).
func (s *Store) Faults(ctx context.Context, campaignID string) (map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT class, n FROM model_faults WHERE campaign_id = ?`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("faults of campaign %s: %w", campaignID, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			class string
			n     int
		)
		if err := rows.Scan(&class, &n); err != nil {
			return nil, fmt.Errorf("faults of campaign %s: %w", campaignID, err)
		}
		out[class] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("faults of campaign %s: %w", campaignID, err)
	}
	return out, nil
}
