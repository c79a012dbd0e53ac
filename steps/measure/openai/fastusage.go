package openai

import (
	"strconv"
	"strings"
)

// usage reads a usage object of plain integers (the last chunk of every stream asked for
// usage: a short answer's most expensive chunk to leave to encoding/json) into a wireUsage of
// its own, since the Chunk keeps its pointers.
func (f *fastDecoder) usage(w *wireChunk) bool {
	if !f.open('{') {
		return false
	}
	u := &wireUsage{}
	var seen [4]bool
	for f.dec.PeekKind() != '}' {
		i, null, ok := f.member(usageNames, seen[:])
		if !ok {
			return false
		}
		if i < 0 || null {
			continue
		}
		switch i {
		case 0, 1:
			n, ok := f.integer(rolePrompt + int8(i))
			if !ok {
				return false
			}
			if i == 0 {
				u.PromptTokens = n
			} else {
				u.CompletionTokens = n
			}
		case 2:
			n, ok := f.detail("reasoning_tokens", roleReasoningTokens)
			if !ok {
				return false
			}
			u.CompletionTokensDetails = &struct {
				ReasoningTokens *int `json:"reasoning_tokens"`
			}{n}
		case 3:
			n, ok := f.detail("cached_tokens", roleCached)
			if !ok {
				return false
			}
			u.PromptTokensDetails = &struct {
				CachedTokens *int `json:"cached_tokens"`
			}{n}
		}
	}
	_, err := f.dec.ReadToken()
	w.Usage = u
	return err == nil
}

// detail reads a details object whose one field taken is field (nil when absent or null), a
// slot of the skeleton in role.
func (f *fastDecoder) detail(field string, role int8) (*int, bool) {
	if !f.open('{') {
		return nil, false
	}
	var n *int
	seen := false
	for f.dec.PeekKind() != '}' {
		tok, ok := f.name()
		if !ok {
			return nil, false
		}
		if name := tok.String(); name != field {
			if strings.EqualFold(name, field) || !f.skipValue() {
				return nil, false
			}
			continue
		}
		if seen {
			return nil, false
		}
		seen = true
		if f.null() {
			continue
		}
		if n, ok = f.integer(role); !ok {
			return nil, false
		}
	}
	_, err := f.dec.ReadToken()
	return n, err == nil
}

// integer reads a number that encoding/json puts in an int: digits only (2.0 and 1e3 are
// its errors, so encoding/json decides them), a slot of the skeleton in role.
func (f *fastDecoder) integer(role int8) (*int, bool) {
	if f.dec.PeekKind() != '0' {
		return nil, false
	}
	v, err := f.dec.ReadValue()
	if err != nil {
		return nil, false
	}
	f.mark(v, '0', role)
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return nil, false
	}
	return &n, true
}
