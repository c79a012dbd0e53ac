package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/sse"
)

// drainGrace is how long the client keeps listening after [DONE] for the server to end the
// stream before it closes the stream itself. The request is complete at [DONE] either way
// (its end is stamped there and nothing read later is counted); the grace only lets the
// connection be reused and shows a server that holds streams open or sends data after [DONE].
const drainGrace = 250 * time.Millisecond

// Header values every request sends, shared: a header set per request was an allocation each.
var (
	contentTypeJSON   = []string{"application/json"}
	acceptEventStream = []string{"text/event-stream"}
)

// readers are SSE readers of streams that ended, reused (sse.Reader.Reset): a reader's
// buffer is most of what a short answer would otherwise allocate.
var readers = sync.Pool{New: func() any { return sse.NewReader(nil, nil) }}

// Request is one chat completion to send.
type Request struct {
	Index        int    // position in the run, copied into the record
	Phase        string // profiling, warmup, burn-in or prewarm
	ID           string // sent as X-Request-ID when set (servers log it; the simulator records it)
	Body         []byte // the chat-completions JSON object built by the caller
	InputTokens  int    // o200k_base tokens of the prompt, copied into the record
	RequestedOut int    // output budget; 0 means read max_completion_tokens / max_tokens from Body
}

// Result is a finished request: its record and the texts it produced.
type Result struct {
	Record    schema.RequestRecord
	Content   string // the answer text, deltas joined
	Reasoning string // the reasoning text, deltas joined
}

// Stream sends req as a streaming chat completion and returns its record. It never returns
// an error: every failure is a record with an error class, so a run keeps its denominators.
func (c *Client) Stream(ctx context.Context, req Request) Result {
	return c.do(ctx, req, true)
}

// Complete sends req as a non-streaming chat completion (prewarm, smoke tests). Its record
// stamps first token, first output and last content at the moment the whole body was read.
func (c *Client) Complete(ctx context.Context, req Request) Result {
	return c.do(ctx, req, false)
}

// exchange is what one HTTP exchange produced, before interpretation.
type exchange struct {
	an       *analyzer // the messages read, analysed as they came (nil: no body was read as a response)
	readErr  error     // nil or io.EOF when the body ended cleanly
	sawDone  bool
	drained  bool // the client closed the stream itself after [DONE]
	endNs    int64
	failNs   int64 // set when the request failed before a response
	status   int
	header   int64
	errBody  []byte
	transErr error
	conn     connTrace
	refused  string // an error class from screen: the body was not read as a response
	refusal  string // its message
	// Protocol violations seen while reading.
	notStreamed bool // a streaming request answered with one JSON body
	afterDone   bool // data messages arrived after [DONE]
}

func (c *Client) do(ctx context.Context, req Request, stream bool) Result {
	rec := schema.RequestRecord{Index: req.Index, Phase: req.Phase, InputTokens: req.InputTokens}
	body, budget, err := prepareBody(req.Body, stream)
	if err != nil {
		rec.StartNs = c.now()
		rec.EndNs = rec.StartNs
		rec.ErrorClass, rec.Error = schema.ErrorConnect, c.redact(err.Error())
		return Result{Record: rec}
	}
	rec.RequestedOut = req.RequestedOut
	if rec.RequestedOut == 0 {
		rec.RequestedOut = budget
	}

	rctx, cancelReq := context.WithCancel(ctx)
	defer cancelReq()
	// build makes the request on rctx with the exchange's trace hooks.
	build := func(trace *httptrace.ClientTrace) (*http.Request, error) {
		hreq, err := c.newChatRequest(httptrace.WithClientTrace(rctx, trace), body)
		if err != nil {
			return nil, err
		}
		// canonical keys and shared values (the transport only reads them): no allocation
		hreq.Header["Content-Type"] = contentTypeJSON
		if stream {
			hreq.Header["Accept"] = acceptEventStream
		}
		if req.ID != "" {
			hreq.Header.Set("X-Request-ID", req.ID)
		}
		// An empty Idempotency-Key marks the POST replayable without sending the header: Go's
		// transport then retries it on a fresh connection when a reused one fails before any
		// response byte (the server closed it while idle). A request the server began answering
		// is never resent, so a retry adds no load.
		hreq.Header["Idempotency-Key"] = nil
		return hreq, nil
	}

	// Within a point's window whose server closes connections after their responses, a
	// request never takes an idle connection: the fresh client gives each its own, from the
	// pre-dialled stock (see reuse; while the window settles that question, it waits).
	hc, window := c.http, c.dialer.window()
	if window != nil && window.fresh(rctx) {
		hc, window = c.fresh, nil
	}
	rec.StartNs = c.now()
	dl := startDeadline(c.timeout, cancelReq)
	defer dl.stop()
	x := c.exchange(hc, build, dl, window, rec.RequestedOut)
	if window != nil && x.conn.closedYoung {
		// The transport retried the request after the server closed a connection that had
		// just carried a response (not one an idle timeout closed): whatever the watch saw,
		// this server closes connections the window would reuse.
		window.closing()
	}
	if x.stale() && rctx.Err() == nil {
		// The server closed the reused connection while the request was still being written
		// (a large prompt: Go's transport retries only when nothing was written), or closed a
		// pre-dialled one just as it was handed out, before it answered a byte (Go's
		// transport retries that only on a connection it reused). The server began no answer,
		// so sending the request once more, on a connection of its own, adds no load.
		x = c.exchange(c.fresh, build, dl, nil, rec.RequestedOut)
		x.conn.resent = true
	}
	return c.interpret(ctx, dl.timedOut(), rec, x)
}

// exchange performs the request and reads the body. Each message is stamped when the read
// that brought its first byte returned (on Linux, with the kernel's receive time) and then
// parsed (analyzer); token counting waits until the end. With window set (a request that
// may leave its connection idle, in a window with a pre-dialled stock) a response that ends
// cleanly hands its connection to the window's watch (reuse).
func (c *Client) exchange(hc *http.Client, build func(*httptrace.ClientTrace) (*http.Request, error), dl *deadline, window *reuse, budget int) (x exchange) {
	live := newLiveTrace(c.now)
	defer func() { x.conn = live.snapshot() }()
	hreq, err := build(&live.trace)
	if err != nil {
		x.failNs = c.now()
		x.transErr = err
		return x
	}
	resp, err := roundTrip(hc, hreq)
	if err != nil {
		x.failNs = c.now()
		x.transErr = err
		return x
	}
	defer resp.Body.Close()
	x.header = c.now()
	conn := live.connection()
	x.status = resp.StatusCode
	if x.refused, x.refusal = screen(resp, hreq.Header.Get("Accept") == "text/event-stream"); x.refused != "" {
		x.endNs = c.now()
		return x
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		x.errBody, _ = io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		x.endNs = c.now()
		return x
	}
	if mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		// A plain JSON completion (non-streaming call, or a server that ignored stream: true):
		// one message, stamped when the whole body has arrived.
		b, err := readBounded(resp.Body, MaxJSONBody)
		x.endNs = c.now()
		x.readErr = err
		x.notStreamed = hreq.Header.Get("Accept") == "text/event-stream"
		if err == nil {
			x.an = &analyzer{}
			x.an.add("", b, x.endNs)
			x.sawDone = true
			x.readErr = io.EOF
		}
		return x
	}
	clock := c.now
	if k := KernelClock(conn); k != nil {
		clock = k
	}
	rd := readers.Get().(*sse.Reader)
	rd.Reset(resp.Body, clock)
	defer func() {
		rd.Reset(nil, nil) // the pool keeps no body
		readers.Put(rd)
	}()
	x.an = newAnalyzer(&c.skel, budget)
	var doneNs int64
	for {
		m, err := rd.NextRaw() // its data is valid until the next call: add copies what it keeps
		if err != nil {
			x.readErr = err
			break
		}
		if x.sawDone {
			// Past [DONE] nothing counts; data there is a violation.
			if len(m.Data) > 0 && !m.Done() {
				x.afterDone = true
			}
			continue
		}
		x.an.add(m.Event, m.Data, m.TimeNs)
		if m.Done() {
			x.sawDone, doneNs = true, m.TimeNs
			dl.drain(drainGrace)
		}
	}
	x.endNs = c.now()
	if window != nil && errors.Is(x.readErr, io.EOF) && !resp.Close {
		// The body ended cleanly and the server said keep-alive: the transport has put the
		// connection back in its idle pool.
		w := watchOf(conn)
		if w != nil {
			w.ended(window)
		}
		window.settle(conn, w)
	}
	if x.sawDone {
		// The response was complete at [DONE].
		x.endNs = doneNs
		if x.readErr != nil && !errors.Is(x.readErr, io.EOF) {
			// The server kept the stream open after [DONE] (or the run ended meanwhile).
			x.drained = true
		}
	}
	return x
}

// stale reports whether the exchange failed on a connection the server had closed before
// answering: a reused one before the request was completely written (the server cannot have
// seen the request), or a pre-dialled one that never delivered a byte (the server closed it
// idle, as Go's transport judges a reused connection that fails before any response byte).
func (x *exchange) stale() bool {
	return x.transErr != nil && ((x.conn.reused && x.conn.wrote == 0) || x.conn.unanswered())
}

// interpret turns an exchange into a record: parse every message, place the timestamps,
// count tokens once, and class any failure.
func (c *Client) interpret(parent context.Context, timedOut bool, rec schema.RequestRecord, x exchange) Result {
	rec.Status = x.status
	rec.HeadersNs = x.header
	x.conn.fill(&rec)
	rec.EndNs = x.endNs
	if x.transErr != nil {
		rec.EndNs = x.failNs
		rec.ErrorClass, rec.Error = c.classContext(parent, timedOut, schema.ErrorConnect, x.transErr)
		return Result{Record: rec}
	}
	if x.refused != "" {
		rec.ErrorClass, rec.Error = x.refused, c.redact(x.refusal)
		return Result{Record: rec}
	}
	if x.status < 200 || x.status > 299 {
		rec.ErrorClass, rec.ServerMessage = c.httpFailure(x.status, x.errBody)
		rec.Error = fmt.Sprintf("HTTP %d: %s", x.status, rec.ServerMessage)
		return Result{Record: rec}
	}
	a, messages := x.an.result(), x.an.messages()
	if x.an != nil {
		x.an.release()
		x.an = nil
	}
	res := Result{Content: a.content, Reasoning: a.reasoning}
	rec.ChunkNs = a.chunkNs
	rec.FirstTokenNs, rec.FirstOutputNs, rec.LastContentNs = a.firstToken, a.firstOutput, a.lastContent
	rec.FinishReason, rec.ReasoningField = a.finish, a.reasoningField
	if a.usage != nil {
		rec.UsagePrompt, rec.UsageComplete, rec.UsageReasoning = a.usage.PromptTokens, a.usage.CompletionTokens, a.usage.ReasoningTokens
		rec.UsageCached = a.usage.CachedTokens
	}
	rec.Timings = a.timings
	rec.PromptTruncated = PromptTruncated(rec, int(c.contextLen.Load()))
	rec.Violations = violations(x, a, parent.Err() != nil)
	if !c.deferCounts {
		c.analysis <- struct{}{}
		CountTokens(&rec, a.content, a.reasoning)
		<-c.analysis
	}
	cleanEnd := x.readErr == nil || errors.Is(x.readErr, io.EOF) || (x.sawDone && x.drained)
	switch {
	case a.sseError != "":
		rec.ErrorClass, rec.ServerMessage = c.streamFailure(schema.ErrorSSE, a.sseError)
		rec.Error = "SSE error event: " + rec.ServerMessage
	case a.inBand != "":
		rec.ErrorClass, rec.ServerMessage = c.streamFailure(schema.ErrorInBand, a.inBand)
		rec.Error = "in-band error with HTTP 200: " + rec.ServerMessage
	case a.malformed != "":
		rec.ErrorClass, rec.Error = schema.ErrorMalformed, c.redact(a.malformed)
	case !x.sawDone && oversized(x.readErr):
		rec.ErrorClass, rec.Error = schema.ErrorOversized, x.readErr.Error()
	case !cleanEnd && !x.sawDone:
		rec.ErrorClass, rec.Error = c.classContext(parent, timedOut, schema.ErrorDropped, x.readErr)
	case !x.sawDone && a.finish == "":
		rec.ErrorClass = schema.ErrorDropped
		rec.Error = fmt.Sprintf("stream ended without [DONE] or finish_reason after %d messages", messages)
	case a.firstToken == 0:
		rec.ErrorClass, rec.Error = schema.ErrorEmpty, "finished without any content or reasoning"
	}
	res.Record = rec
	return res
}

// classContext names a transport or read failure: cancelled when the run was interrupted,
// timeout when the per-request deadline passed, otherwise the given class.
func (c *Client) classContext(parent context.Context, timedOut bool, class string, err error) (string, string) {
	switch {
	case parent.Err() != nil:
		return schema.ErrorCancelled, "cancelled: " + c.redact(err.Error())
	case timedOut:
		return schema.ErrorTimeout, fmt.Sprintf("no complete response within %s", c.timeout)
	}
	return class, c.redact(err.Error())
}

// Mismatch reports whether a client token count differs from the server's usage by more
// than min(5 % of the server's count, 50 tokens), AIPerf's OSL-mismatch threshold.
func Mismatch(client, server int) bool {
	diff := client - server
	if diff < 0 {
		diff = -diff
	}
	return float64(diff) > min(0.05*float64(server), 50)
}

// roundTrip sends a request as hc.Do would with this package's clients (no redirects
// followed, no cookie jar, no client timeout) without its per-request cost — the copy of the
// headers it keeps for redirects, a tenth of a one-token request's allocations — and fails
// with the *url.Error Do would return ("Post \"URL\": cause").
func roundTrip(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Transport.RoundTrip(req)
	if err != nil {
		op := req.Method[:1] + strings.ToLower(req.Method[1:])
		return nil, &url.Error{Op: op, URL: req.URL.Redacted(), Err: err}
	}
	return resp, nil
}
