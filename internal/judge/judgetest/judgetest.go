// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

// Package judgetest is an httptest server speaking the OpenAI embeddings API with a
// deterministic vectoriser, for the tests of the packages that use embeddings.
package judgetest // import "github.com/agenteval/agenteval-collector/internal/judge/judgetest"

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agenteval/agenteval-collector/internal/text"
)

// Dims is the length of the vectors served.
const Dims = 512

// Server is an /v1/embeddings endpoint. Hang, when set before the first request, makes
// every request wait until the test ends (or the client gives up).
type Server struct {
	*httptest.Server
	Requests atomic.Int64 // embeddings requests served or hung
	Inputs   atomic.Int64 // texts received
	hang     chan struct{}
	once     sync.Once
}

// New starts a server closed at the end of t; hang makes it never answer.
func New(t testing.TB, hang bool) *Server {
	s := &Server{}
	if hang {
		s.hang = make(chan struct{})
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.once.Do(func() {
			if s.hang != nil {
				close(s.hang)
			}
		})
		s.Close()
	})
	return s
}

// BaseURL is the API base URL to configure (judge.embeddings.endpoint).
func (s *Server) BaseURL() string { return s.URL + "/v1/" }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	if s.hang != nil {
		select {
		case <-s.hang:
		case <-r.Context().Done():
		}
		return
	}
	if r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.Inputs.Add(int64(len(req.Input)))
	data := make([]map[string]any, len(req.Input))
	tokens := 0
	for i, in := range req.Input {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Vector(in)}
		tokens += (len(in) + 3) / 4
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// Vector is the deterministic embedding of s: a bag of its content words
// (text.Tokens, weight 1) and of their character trigrams (weight 0.5, so that
// inflections and compounds come close), hashed into Dims dimensions and normalised. A
// text without content words is hashed whole into one dimension: like a real model's,
// no vector is zero (the client refuses a zero vector as malformed).
func Vector(s string) []float64 {
	v := make([]float64, Dims)
	add := func(f string, w float64) {
		h := fnv.New32a()
		_, _ = h.Write([]byte(f))
		v[h.Sum32()%Dims] += w
	}
	if len(text.Tokens(s)) == 0 {
		add("s:"+s, 1)
	}
	for _, tok := range text.Tokens(s) {
		add("w:"+tok, 1)
		r := []rune(" " + tok + " ")
		for i := 0; i+3 <= len(r); i++ {
			add("t:"+string(r[i:i+3]), 0.5)
		}
	}
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	if n > 0 {
		n = math.Sqrt(n)
		for i := range v {
			v[i] /= n
		}
	}
	return v
}
