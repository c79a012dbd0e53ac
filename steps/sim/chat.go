package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// chatBody is the part of a chat-completions request the simulator honours.
type chatBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	MinTokens           int  `json:"min_tokens"`
	IgnoreEOS           bool `json:"ignore_eos"`
}

// promptText joins the text of every message (string contents and text parts).
func (b *chatBody) promptText() (string, error) {
	var sb strings.Builder
	for i, m := range b.Messages {
		if i > 0 {
			sb.WriteByte('\n')
		}
		raw := strings.TrimSpace(string(m.Content))
		switch {
		case raw == "" || raw == "null":
		case raw[0] == '"':
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				return "", fmt.Errorf("messages[%d].content: %w", i, err)
			}
			sb.WriteString(s)
		case raw[0] == '[':
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return "", fmt.Errorf("messages[%d].content: %w", i, err)
			}
			for _, p := range parts {
				sb.WriteString(p.Text)
			}
		default:
			return "", fmt.Errorf("messages[%d].content: want a string or a list of parts", i)
		}
	}
	return sb.String(), nil
}

// PromptDigest names a request by its prompt, so a test (or perfdag calibrate) can pair the
// simulator's truth with the client's record without the client sending any id.
func PromptDigest(prompt string) string {
	h := sha256.Sum256([]byte(prompt))
	return hex.EncodeToString(h[:])
}

// apiError writes an OpenAI-style error object.
func apiError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// chat serves POST /v1/chat/completions.
func (s *Sim) chat(w http.ResponseWriter, r *http.Request) {
	t0 := now()
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", "read body: "+err.Error())
		return
	}
	var body chatBody
	if err := json.Unmarshal(raw, &body); err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", "body is not a chat-completions JSON object: "+err.Error())
		return
	}
	if body.Model != s.model {
		apiError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", body.Model))
		return
	}
	prompt, err := body.promptText()
	if err != nil {
		apiError(w, http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	budget := DefaultMaxTokens
	switch {
	case body.MaxCompletionTokens != nil:
		budget = *body.MaxCompletionTokens
	case body.MaxTokens != nil:
		budget = *body.MaxTokens
	}
	if budget < 1 {
		apiError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("max_tokens must be at least 1, got %d", budget))
		return
	}
	seq := s.seq.Add(1) - 1
	pl := makePlan(&s.p, s.vocab, seq, request{budget: budget, minTokens: body.MinTokens, ignoreEOS: body.IgnoreEOS})
	x := &call{
		s: s, w: w, r: r, body: &body, plan: pl, prompt: prompt,
		truth: Served{
			Seq: int(seq), RequestID: r.Header.Get("X-Request-ID"), Model: body.Model, Stream: body.Stream,
			Fault: pl.fault, PromptTokens: tokens.Count(prompt), Budget: budget, Unanswered: pl.unanswered,
			ReasoningTokens: pl.reasoningN, AnswerTokens: pl.answerN, FinishReason: pl.finish, ArrivedNs: t0,
		},
	}
	defer func() {
		x.truth.EndNs = now()
		x.truth.PromptSHA256 = PromptDigest(prompt) // after the response: never inside a timing
		s.state.record(x.truth)
	}()
	switch pl.fault {
	case FaultHTTP500:
		x.truth.Status = http.StatusInternalServerError
		apiError(w, http.StatusInternalServerError, "InternalServerError", "simulated engine failure")
		return
	case FaultHTTP429:
		x.truth.Status = http.StatusTooManyRequests
		w.Header().Set("Retry-After", "1")
		apiError(w, http.StatusTooManyRequests, "RateLimitError", "simulated rate limit")
		return
	}
	x.truth.Status = http.StatusOK
	x.serve()
}

// call is one request being served.
type call struct {
	s      *Sim
	w      http.ResponseWriter
	r      *http.Request
	body   *chatBody
	plan   plan
	prompt string
	truth  Served
	buf    []byte
	timer  *time.Timer

	lastSend  int64 // clock reading just before the last message was written
	malformed bool  // a non-streaming reply must be cut short
}

// serve runs the request through admission, prefill and decode.
func (x *call) serve() {
	s := x.s
	id := "chatcmpl-" + strconv.Itoa(x.truth.Seq)
	x.buf = make([]byte, 0, 512)
	rc := http.NewResponseController(x.w)
	if x.body.Stream {
		x.w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		x.w.Header().Set("Cache-Control", "no-cache")
		x.w.WriteHeader(http.StatusOK)
		x.truth.RoleSentNs = now()
		if !x.send(rc, x.chunk(id, `"role":"assistant","content":""`, "null")) {
			return
		}
	}
	if !s.state.admit(x.r.Context().Done()) {
		return
	}
	defer s.state.release()
	x.truth.AdmittedNs = now()
	s.state.prefill(x.prompt, x.truth.PromptTokens)
	kv := x.truth.PromptTokens
	defer func() { s.state.finished(kv) }()

	first := x.truth.AdmittedNs + int64(s.p.ttft) + int64(s.p.prefillPer1K)*int64(x.truth.PromptTokens)/1000
	x.truth.InjectedTTFTNs = first - x.truth.ArrivedNs
	x.timer = time.NewTimer(time.Hour)
	defer x.timer.Stop()
	pieces := x.plan.pieces
	faultAt := len(pieces) / 2
	deadline := first + int64(s.p.tpot)*int64(max(firstTokens(pieces)-1, 0))
	running, _ := s.state.load()
	for i, pc := range pieces {
		if i > 0 {
			d := int64(pc.tokens) * (int64(s.p.tpot) + int64(s.p.batchTPOT)*int64(max(running-1, 0)))
			deadline += d
			x.truth.TokenDelayNs = append(x.truth.TokenDelayNs, d)
		}
		if i == faultAt && x.midStreamFault(rc, id) {
			return
		}
		if !x.sleepUntil(deadline) {
			return
		}
		x.truth.DeadlineNs = append(x.truth.DeadlineNs, deadline)
		if x.body.Stream {
			field := "content"
			if pc.reasoning {
				field = x.plan.reasonField
			}
			if !x.send(rc, x.chunk(id, `"`+field+`":`+jsonString(pc.text), "null")) {
				return
			}
			x.truth.SentNs = append(x.truth.SentNs, x.lastSend)
			if !pc.reasoning && x.truth.AnswerSentNs == 0 {
				x.truth.AnswerSentNs = x.lastSend
			}
		}
		kv += pc.tokens
		x.truth.SentTokens += pc.tokens
		running = s.state.generated(pc.tokens)
	}
	if len(pieces) == 0 && x.plan.fault != "" && x.midStreamFault(rc, id) {
		return
	}
	if !x.body.Stream {
		x.truth.SentNs = append(x.truth.SentNs, now())
		x.writeCompletion(id)
		return
	}
	if !x.send(rc, x.chunk(id, "", strconv.Quote(x.plan.finish))) {
		return
	}
	if x.body.StreamOptions != nil && x.body.StreamOptions.IncludeUsage {
		if !x.send(rc, x.usageChunk(id)) {
			return
		}
	}
	x.send(rc, []byte("data: [DONE]\n\n"))
}

// firstTokens is the token count of the first chunk (its last token sets its send time).
func firstTokens(p []piece) int {
	if len(p) == 0 {
		return 1
	}
	return p[0].tokens
}
