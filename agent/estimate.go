package agent

// EstimateTokens estimates the token count of text from its length: one
// token per four bytes, rounded up. It is the fallback when neither the
// server nor a tokenizer gave a count; results carry CountEstimate.
func EstimateTokens(text string) int {
	return (len(text) + 3) / 4
}

// EstimateUsage estimates the usage of one call from its request and reply.
//
// The prompt estimate covers every message's content and tool calls plus the
// tool specs offered. Following the OpenAI convention, CompletionTokens
// includes the reasoning tokens: it covers the reply's content, reasoning and
// tool calls, while ReasoningTokens covers the reasoning alone. Every count
// has source CountEstimate; Latency and TTFT are left zero and Calls is 1.
func EstimateUsage(req Request, reply Message) Usage {
	prompt := 0
	for _, m := range req.Messages {
		prompt += EstimateTokens(m.Content) + toolCallTokens(m.ToolCalls)
	}
	for _, t := range req.Tools {
		prompt += EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.Parameters))
	}
	reasoning := EstimateTokens(reply.Reasoning)
	return Usage{
		PromptTokens:     prompt,
		CompletionTokens: EstimateTokens(reply.Content) + reasoning + toolCallTokens(reply.ToolCalls),
		ReasoningTokens:  reasoning,
		PromptSource:     CountEstimate,
		CompletionSource: CountEstimate,
		ReasoningSource:  CountEstimate,
		Calls:            1,
	}
}

func toolCallTokens(calls []ToolCall) int {
	n := 0
	for _, c := range calls {
		n += EstimateTokens(c.Name) + EstimateTokens(string(c.Arguments))
	}
	return n
}
