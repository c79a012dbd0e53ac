package sim

import (
	"hash/fnv"
	"math"
	"strconv"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// VirtualEpoch is the virtual clock's zero: every timestamp a Virtual model records is an
// offset from it (2026-01-01T00:00:00Z), never a reading of the wall clock.
const VirtualEpoch int64 = 1767225600 * int64(time.Second)

// Virtual is the simulator's deterministic mode (`sim: {deterministic: true}`): a test double
// that answers a request without a network or a clock. Every field of a record — timestamps,
// token counts, usage, faults — is a pure function of the configuration and of (cell, phase,
// concurrency, request index, prompt and output budget), so two runs of one campaign record
// identical numbers. It exists for tests of the engine (resume, reuse, edits); it measures
// nothing, and the client never depends on it: sessions hand it the request instead of
// streaming it, so no client code path runs.
type Virtual struct {
	p params
}

// NewVirtual validates cfg as Start does and returns its deterministic model.
func NewVirtual(cfg schema.SimConfig) (*Virtual, error) {
	p, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	return &Virtual{p: p}, nil
}

// Record is the record of request index of phase at concurrency in cell, with inputTokens of
// prompt and an output budget of outputTokens (the request ignores EOS, as AA requests do).
//
// The model: TTFT = (ttft + prefill × input/1000) × exp(ttft_sigma × Z), Z a standard normal
// drawn from the request's identity (lognormal, median the nominal TTFT); every chunk then takes chunk_tokens × (tpot +
// batch_tpot × (min(concurrency, max_batch) − 1)); request i starts at wave ⌊i / concurrency⌋
// of the closed loop, each wave as long as the request at its nominal TTFT. Faults and unanswered requests
// are drawn from a hash of the request's identity, not from arrival order.
func (v *Virtual) Record(cell, phase string, concurrency, index, inputTokens, outputTokens int) schema.RequestRecord {
	conc := max(concurrency, 1)
	latency := v.latency(conc, inputTokens, outputTokens)
	start := VirtualEpoch + int64(index/conc)*int64(latency+time.Millisecond)
	return v.record(cell, phase, conc, index, inputTokens, outputTokens, start, 0)
}

// latency is how long a request holds its batch slot at concurrency conc: its nominal TTFT,
// then every chunk after the first.
func (v *Virtual) latency(conc, inputTokens, outputTokens int) time.Duration {
	p := &v.p
	n := max(outputTokens, 1)
	if outputTokens <= 0 {
		n = DefaultMaxTokens
	}
	nominal := p.ttft + time.Duration(float64(p.prefillPer1K)*float64(inputTokens)/1000)
	perToken := p.tpot + time.Duration(min(conc, p.maxBatch)-1)*p.batchTPOT
	ct := max(p.chunkTokens, 1)
	chunks := (n + ct - 1) / ct
	return nominal + time.Duration(chunks-1)*time.Duration(ct)*perToken
}

// OpenRecord is request index of an open loop against the virtual server, its user arriving
// at arrivals[index] after VirtualEpoch (the point's seeded schedule). The server runs
// max_batch requests at once and queues the rest in arrival order; each holds its slot for its
// latency at a full batch (Record's model at concurrency max_batch). A client cap of at most
// max_batch (cap > 0) holds the request back instead, so it is sent late — cap-delayed — and
// served at once; a larger cap is not modelled (the server's queue is). So that a record stays
// a pure function of its index, every request before it is taken to hold its slot as long as
// it does, exact for a workload of one shape: request i then gets the slot request i − L
// leaves, L the slots, and starts at max over k ≥ 0 of arrivals[i − kL] + k × latency. Its
// service rate is L / latency requests per second: below it no request waits, above it the
// queue and every wait grow with each arrival. ScheduledNs is its arrival on the virtual
// clock; StartNs its send.
func (v *Virtual) OpenRecord(cell, phase string, arrivals []time.Duration, cap, index, inputTokens, outputTokens int) schema.RequestRecord {
	lanes := v.p.maxBatch
	clientHeld := cap > 0 && cap <= lanes
	if clientHeld {
		lanes = cap
	}
	latency := v.latency(lanes, inputTokens, outputTokens)
	at := arrivals[index]
	served := at
	for k := 1; index-k*lanes >= 0; k++ {
		served = max(served, arrivals[index-k*lanes]+time.Duration(k)*latency)
	}
	sched := VirtualEpoch + int64(at)
	send, wait := sched, served-at
	if clientHeld {
		send, wait = VirtualEpoch+int64(served), 0
	}
	rec := v.record(cell, phase, lanes, index, inputTokens, outputTokens, send, wait)
	rec.ScheduledNs, rec.CapDelayed = sched, send > sched
	return rec
}

// record is request index's record sent at start, waiting wait in the server's queue before
// its prefill.
func (v *Virtual) record(cell, phase string, conc, index, inputTokens, outputTokens int, start int64, wait time.Duration) schema.RequestRecord {
	p := &v.p
	n := max(outputTokens, 1)
	if outputTokens <= 0 {
		n = DefaultMaxTokens
	}
	nominal := p.ttft + time.Duration(float64(p.prefillPer1K)*float64(inputTokens)/1000)
	perToken := p.tpot + time.Duration(min(conc, p.maxBatch)-1)*p.batchTPOT
	ct := max(p.chunkTokens, 1)
	chunks := (n + ct - 1) / ct
	rec := schema.RequestRecord{Index: index, Phase: phase, StartNs: start, InputTokens: inputTokens, RequestedOut: outputTokens}

	h := fnv.New64a()
	for _, s := range []string{strconv.FormatInt(p.seed, 10), cell, phase, strconv.Itoa(conc), strconv.Itoa(index)} {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	x := mix(h.Sum64()) // FNV alone leaves the high bits poorly mixed
	u := float64(x>>11) / float64(1<<53)
	ttft := nominal
	if p.ttftSigma > 0 {
		u2 := (float64(mix(x+0x9e3779b97f4a7c15)>>11) + 0.5) / float64(1<<53) // in (0, 1)
		ttft = time.Duration(float64(nominal) * p.ttftSpread(math.Sqrt2*math.Erfinv(2*u2-1)))
	}
	ttft += wait
	cum := 0.0
	for _, f := range p.faults {
		cum += f.frac
		if f.frac > 0 && u < cum {
			rec.Status, rec.ErrorClass, rec.Error = 200, ExpectedClass(f.name), "virtual fault "+f.name
			switch f.name {
			case FaultHTTP500:
				rec.Status = 500
			case FaultHTTP429:
				rec.Status = 429
			}
			rec.EndNs = start + int64(ttft)
			return rec
		}
	}

	reasoningN := 0
	if p.reasoning && p.reasoningField != "think" { // inline <think> text is content to a client
		reasoningN = min(p.reasoningTokens, n-1)
		if unanswered := int(float64(index+1)*p.unanswered) > int(float64(index)*p.unanswered); unanswered {
			reasoningN = n
		}
	}
	rec.ChunkNs = make([]int64, chunks)
	for k := range chunks {
		rec.ChunkNs[k] = start + int64(ttft) + int64(k)*int64(ct)*int64(perToken)
		if k*ct >= reasoningN && rec.FirstOutputNs == 0 && reasoningN < n {
			rec.FirstOutputNs = rec.ChunkNs[k]
		}
	}
	rec.HeadersNs = start + int64(time.Millisecond/10)
	rec.FirstTokenNs = rec.ChunkNs[0]
	rec.LastContentNs = rec.ChunkNs[chunks-1]
	rec.EndNs = rec.LastContentNs + int64(time.Millisecond/10)
	rec.OutputTokens, rec.ReasoningTok = n-reasoningN, reasoningN
	prompt, complete := inputTokens, n
	rec.UsagePrompt, rec.UsageComplete = &prompt, &complete
	if p.reasoning && p.reasoningField != "think" {
		r := reasoningN
		rec.UsageReasoning, rec.ReasoningField = &r, p.reasoningField
	}
	rec.FinishReason, rec.Status = "length", 200
	return rec
}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
