package cuda2hip

// Close closes the cuda-synth lane under this one: its GPU run slots stop
// being reported to the sandbox runner's metrics (the campaign using the
// lane has ended). Its cache and slots are counted under cuda-synth's name.
// Idempotent.
func (l *Lane) Close() error { return l.cs.Close() }
