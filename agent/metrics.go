package agent

// CallMetrics is told about every model call of an attempt that returned a
// reply: the model the server reported, the pool endpoint that served it
// ("" outside a Pool) and the call's usage (tokens, Latency, and TTFT when
// the call streamed). Failed calls go to the fault observer instead
// (WithFaultObserver). Implementations must be quick and safe for
// concurrent use; cmd/kiln's records Prometheus histograms.
type CallMetrics interface {
	ModelCall(model, endpoint string, u Usage)
}
