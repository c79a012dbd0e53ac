//go:build linux

package session

import (
	"context"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
)

// connectsInTTFT counts the records whose connection set-up ran inside their TTFT: the first
// request on a connection that was not pre-dialled.
func connectsInTTFT(recs []schema.RequestRecord) (inside, predialed int) {
	for _, r := range recs {
		switch {
		case r.ConnectNs > 0 && r.ConnPredialed:
			predialed++
		case r.ConnectNs > 0 || (!r.ConnReused && !r.ConnPredialed):
			inside++
		}
	}
	return inside, predialed
}

// TestClosingServerNoConnectInsideTTFT: against a server that closes each connection after a
// streamed response while answering keep-alive (as llama-server does), every request after
// the first C needs a new connection. None of them may wait for a connect: each is served by
// a connection dialled before it was sent, whose set-up is recorded (connect_ns > 0, done
// before start_ns), and every request still succeeds with the server's 4 tokens.
func TestClosingServerNoConnectInsideTTFT(t *testing.T) {
	const c, n = 16, 64
	base := startServer(t, childClosing)
	_, recs, tr := exactPoint(t, base, loadgen.Config{Requests: n, Concurrency: c})
	delta := ttftDelta(t, tr, recs) // fails on any error, and on stamps that miss the server's
	inside, predialed := connectsInTTFT(recs)
	for _, r := range recs {
		if r.Status != 200 || r.OutputTokens != 4 || r.UsageComplete == nil || *r.UsageComplete != 4 {
			t.Errorf("request %d: status %d, %d output tokens: want 200 and the 4 the server sent", r.Index, r.Status, r.OutputTokens)
		}
		if r.ConnPredialed && (r.ConnectNs <= 0 || r.ConnectDoneNs <= 0 || r.ConnectDoneNs >= r.StartNs || r.ConnReused) {
			t.Errorf("request %d: pre-dialled connection with connect_ns %d done at %d, start %d, reused %v: want a set-up done before the request",
				r.Index, r.ConnectNs, r.ConnectDoneNs, r.StartNs, r.ConnReused)
		}
	}
	var inFirst, inRest []float64
	for k, r := range recs {
		if r.ConnPredialed || r.ConnReused {
			inRest = append(inRest, delta[k])
		} else {
			inFirst = append(inFirst, delta[k])
		}
	}
	t.Logf("c=%d, %d requests: %d connects inside TTFT, %d pre-dialled, %d reused; server accepted %d connections; "+
		"client − server TTFT mean %.3f ms (requests that dialled: %.3f ms over %d; the others: %.3f ms)",
		c, n, inside, predialed, n-inside-predialed, len(tr.Conns), meanOf(delta), meanOrZero(inFirst), len(inFirst), meanOrZero(inRest))
	if inside != 0 {
		t.Errorf("%d of %d requests waited for a connect inside their TTFT, want 0", inside, n)
	}
	if predialed < n/2 {
		t.Errorf("%d requests were served by a pre-dialled connection, want at least %d (the server closes each after a stream)", predialed, n/2)
	}
}

func meanOrZero(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return meanOf(v)
}

// BenchmarkExactTimingClosing is BenchmarkExactTiming against the exact-timing server that
// closes each connection after its stream (as llama-server does): every request after a
// window's first 16 is on a new connection. It reports the mean client TTFT − server TTFT of
// those requests, their mean time from start stamp to request written (a new connection's
// first request goes through the transport's dial path, though the stock's connection is
// already open), the mean number per point that still dialled inside their TTFT (goal 0), and
// the mean number per point retried after an idle connection the server closed (goal 0).
func BenchmarkExactTimingClosing(b *testing.B) {
	const c = 16
	base := startServer(b, childClosing)
	var rest, write, inside, retried []float64
	for b.Loop() {
		s := exactSession(b, base)
		recs, err := s.Load(context.Background(), PhaseProfiling, loadgen.Config{Requests: 4 * c, Concurrency: c}, nil)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		delta := ttftDelta(b, readTruth(b, base), recs)
		rest = append(rest, delta[c:]...)
		for _, r := range recs[c:] {
			write = append(write, float64(r.SentNs-r.StartNs)/1e6)
		}
		in, _ := connectsInTTFT(recs)
		inside = append(inside, float64(in))
		n := 0
		for _, r := range recs {
			if r.Retried {
				n++
			}
		}
		retried = append(retried, float64(n))
	}
	b.ReportMetric(meanOf(rest), "rest-delta-mean-ms")
	b.ReportMetric(meanOf(write), "rest-client-write-mean-ms")
	b.ReportMetric(meanOf(inside), "connects-in-ttft/point")
	b.ReportMetric(meanOf(retried), "retries/point")
	b.ReportMetric(0, "ns/op")
}
