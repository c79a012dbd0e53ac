package openai

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/sse"
)

// Bounds on what one response can make the client hold. SSE lines and events are bounded by
// sse.DefaultMaxLine and sse.DefaultMaxEvent.
const (
	// MaxErrorBody is how much of a non-2xx or non-SSE body is read for its error message:
	// enough for any JSON error object, and an endless body costs nothing.
	MaxErrorBody = 4 << 10
	// MaxJSONBody bounds a non-streaming completion body (8 MiB: a 128k-token answer is
	// under 1 MiB of JSON); past it the request fails as oversized_event.
	MaxJSONBody = 8 << 20
)

// noRedirect is the chat client's CheckRedirect: a redirect is never followed, so the bearer
// key is only ever sent to the configured origin and a 302 never turns the POST into a GET.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// screen inspects a response before its body is read and names the failure when the body
// must not be read as a stream: a redirect, a Content-Encoding, or a 2xx stream answer that is
// neither SSE nor JSON. It returns "" when the body may be read; non-2xx statuses other than
// redirects are left to the caller.
func screen(resp *http.Response, stream bool) (class, msg string) {
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		return schema.ErrorRedirect, fmt.Sprintf("HTTP %d redirect to %q not followed (the request and its key stay with the configured origin)",
			resp.StatusCode, redact.URL(resp.Header.Get("Location")))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", ""
	}
	// The transport asks for no compression; an encoded answer anyway is refused rather
	// than decoded, because a decompressor buffers the stream and blurs every stamp.
	if enc := strings.TrimSpace(resp.Header.Get("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		return schema.ErrorEncoding, fmt.Sprintf("response has Content-Encoding %q; perfdag reads only unencoded streams (the request sends no Accept-Encoding)", snippet([]byte(enc)))
	}
	if !stream {
		return "", ""
	}
	ct := resp.Header.Get("Content-Type")
	mt := mediaType(ct)
	if mt == "text/event-stream" || mt == "application/json" || mt == "" {
		return "", ""
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	return schema.ErrorNotSSE, fmt.Sprintf("HTTP %d with Content-Type %q, not text/event-stream: %s", resp.StatusCode, snippet([]byte(ct)), snippet(head))
}

// readBounded reads a whole non-SSE body of at most limit bytes; past it, errOversized.
func readBounded(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: body larger than %d bytes", errOversized, limit)
	}
	return b, nil
}

var errOversized = errors.New("response too large")

// oversized reports whether a read failed on one of the bounds above.
func oversized(err error) bool {
	return errors.Is(err, errOversized) || errors.Is(err, sse.ErrLineTooLong) || errors.Is(err, sse.ErrEventTooLarge)
}

// mediaType is the media type of a Content-Type value, lower case, as mime.ParseMediaType
// reads it ("" when it cannot); the two an SSE stream is sent with are known without parsing.
func mediaType(ct string) string {
	switch ct {
	case "text/event-stream", "text/event-stream; charset=utf-8":
		return "text/event-stream"
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt
}
