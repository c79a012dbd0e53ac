package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// chunk renders one vLLM-style chat.completion.chunk SSE message with the given delta body
// and finish_reason (JSON text: null or a quoted string).
func (x *call) chunk(id, delta, finish string) []byte {
	b := x.buf[:0]
	b = append(b, `data: {"id":"`...)
	b = append(b, id...)
	b = append(b, `","object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, x.s.start, 10)
	b = append(b, `,"model":`...)
	b = append(b, jsonString(x.s.model)...)
	b = append(b, `,"choices":[{"index":0,"delta":{`...)
	b = append(b, delta...)
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = append(b, finish...)
	b = append(b, "}]}\n\n"...)
	x.buf = b
	return b
}

// usage is the OpenAI usage object for this request as planned.
func (x *call) usage() map[string]any {
	completion := x.plan.reasoningN + x.plan.answerN
	u := map[string]any{
		"prompt_tokens":     x.truth.PromptTokens,
		"completion_tokens": completion,
		"total_tokens":      x.truth.PromptTokens + completion,
	}
	if x.plan.reasonField != "" && x.plan.reasoningN > 0 {
		u["completion_tokens_details"] = map[string]any{"reasoning_tokens": x.plan.reasoningN}
	}
	return u
}

// usageChunk is the final usage message: empty choices, usage object.
func (x *call) usageChunk(id string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "chat.completion.chunk", "created": x.s.start, "model": x.s.model,
		"choices": []any{}, "usage": x.usage(),
	})
	return append(append([]byte("data: "), b...), "\n\n"...)
}

// writeCompletion answers a non-streaming request.
func (x *call) writeCompletion(id string) {
	var content, reasoning strings.Builder
	for _, p := range x.plan.pieces {
		if p.reasoning {
			reasoning.WriteString(p.text)
		} else {
			content.WriteString(p.text)
		}
	}
	msg := map[string]any{"role": "assistant", "content": content.String()}
	if reasoning.Len() > 0 {
		msg[x.plan.reasonField] = reasoning.String()
	}
	resp := map[string]any{
		"id": id, "object": "chat.completion", "created": x.s.start, "model": x.s.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": x.plan.finish}},
		"usage":   x.usage(),
	}
	if x.malformed {
		x.w.Header().Set("Content-Type", "application/json")
		x.w.WriteHeader(http.StatusOK)
		b, _ := json.Marshal(resp)
		_, _ = x.w.Write(b[:len(b)/2])
		return
	}
	writeJSON(x.w, http.StatusOK, resp)
}

// errorPayload is the body of an SSE error event or in-band error.
const errorPayload = `{"error":{"code":500,"message":"simulated engine failure","type":"server_error"}}`

// midStreamFault injects the request's fault half-way through its output. It reports whether
// the request ends here.
func (x *call) midStreamFault(rc *http.ResponseController, id string) bool {
	switch x.plan.fault {
	case FaultDrop:
		if x.body.Stream {
			_ = rc.Flush()
		}
		// Abort the connection without ending the response: the client sees the stream cut.
		panic(http.ErrAbortHandler)
	case FaultStall:
		select {
		case <-x.r.Context().Done():
		case <-x.s.done:
		}
		return true
	case FaultMalformed:
		if !x.body.Stream {
			x.malformed = true
			return false
		}
		full := x.chunk(id, `"content":" the"`, "null")
		cut := append([]byte(nil), full[:len(full)/2]...)
		return !x.send(rc, append(cut, "\n\n"...))
	case FaultSSEError, FaultInBand:
		if !x.body.Stream {
			writeRaw(x.w, errorPayload)
			return true
		}
		prefix := "data: " // in-band: an error object where a chunk belongs, HTTP still 200
		if x.plan.fault == FaultSSEError {
			prefix = "event: error\ndata: "
		}
		x.send(rc, []byte(prefix+errorPayload+"\n\n"))
		return true
	}
	return false
}

func writeRaw(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(body))
}

// send writes one SSE message and flushes it; false when the client has gone.
func (x *call) send(rc *http.ResponseController, b []byte) bool {
	x.lastSend = now()
	if _, err := x.w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// sleepUntil waits for the absolute deadline; false when the client or the server went away.
func (x *call) sleepUntil(deadline int64) bool {
	if x.s.p.zero {
		return true
	}
	d := time.Duration(deadline - now())
	if d <= 0 {
		return true
	}
	x.timer.Reset(d)
	select {
	case <-x.timer.C:
		return true
	case <-x.r.Context().Done():
		return false
	case <-x.s.done:
		return false
	}
}

// jsonString quotes s as a JSON string; plain ASCII words take the fast path.
func jsonString(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return string(b)
		}
	}
	return `"` + s + `"`
}
