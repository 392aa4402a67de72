// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStem(t *testing.T) {
	// Each group must share one stem (the first element is the expected stem).
	groups := [][]string{
		{"sort", "sort", "sorts", "sorted", "sorting", "sortieren", "sortiert", "sortiere", "sortierte"},
		{"ord", "order", "orders", "ordered", "ordering", "orden", "ordenar", "ordeno", "ordenas", "ordenado"},
		{"queri", "query", "queries"},
		{"tri", "try", "tried", "tries", "trier", "trie", "triez"},
		{"run", "running", "runner"},
		{"stop", "stop", "stopped", "stopping"},
		{"process", "process", "processes", "processed", "processing"},
		{"call", "call", "calls", "calling", "called"},
		{"bestell", "bestellung", "bestellungen", "bestellen"},
		{"rembour", "remboursement", "rembourser", "remboursee"},
		{"inform", "information", "informacion"},
		{"fil", "file", "files"},
		{"movi", "movie", "movies"},
		{"list", "list", "lists", "liste", "listen", "lista", "listas"},
		{"status", "status"},
		{"class", "class"},
		{"day", "day", "days"},
		{"refund", "refund", "refunds", "refunded", "refunding"},
	}
	for _, g := range groups {
		for _, w := range g[1:] {
			assert.Equal(t, g[0], string(stem([]byte(w))), "stem(%q)", w)
		}
	}
	// Short words and non-ASCII words are left alone.
	for _, w := range []string{"go", "sql", "привет", "naïve"} {
		assert.Equal(t, w, string(stem([]byte(w))), "stem(%q)", w)
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"How do I sort?", []string{"sort"}},
		{"Can you show me how to sort?", []string{"sort"}},
		{"Process refund for order #12345", []string{"process", "refund", "ord", "12345"}},
		{"ORD-12345", []string{"ord", "12345"}},
		{"Refund $1,200.50 please", []string{"refund", "1200.5"}},
		{"Les commandes remboursées", []string{"command", "rembour"}},
		{"Straße", []string{"strass"}},
		{"café", []string{"caf"}},
		{"cafe\u0301", []string{"caf"}}, // decomposed accent
		{"🚀 launch 🚀", []string{"launch"}},
		{"如何排序", []string{"如何", "何排", "排序"}},
		{"好", []string{"好"}},
		{"排序list", []string{"排序", "list"}},
		{"ord\xffer sort", []string{"ord", "sort"}}, // invalid byte separates; "er" is a (German) stop word
		{"don't sort", []string{"sort"}},
		{"l'ordre", []string{"ordr"}},
		{"numbers 1,2,3 3,5 1.200 1,200 0042 1.234,50 7", []string{"numb", "1.2.3", "3.5", "1.2", "1200", "0042", "1234.5", "7"}},
		{"showing shows showed", nil}, // framing verbs in any inflection
		{"", nil},
		{"the of and", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Tokens(tt.in), "Tokens(%q)", tt.in)
	}
}

func TestSimilarity(t *testing.T) {
	tests := []struct {
		a, b string
		want float64
	}{
		// seed examples (ReAsk README): a re-ask, and an unrelated request.
		{"How do I sort?", "Can you show me how to sort?", 1},
		{"Process refund for order #12345", "What is the weather in Paris?", 0},
		// ids: {ord, 12345} vs {ord, 67890}: 1/sqrt(5·5) = 0.2, conflicting ids -> ×0.5
		{"order 12345", "order 67890", 0.1},
		{"order 12345", "order #12345", 1},
		// {refund, ord, 12345} vs {refund, ord, 67890}: 2/6, conflict -> 1/6
		{"Refund order 12345", "Refund order 67890", 1.0 / 6},
		// an id on one side only is no conflict: 2/sqrt(2·6)
		{"Refund my order", "Refund order 12345", 2 / math.Sqrt(12)},
		// {refund, ord, 12345} vs {refund, ord, 12345, now}: 6/sqrt(6·7)
		{"Refund order 12345", "Please refund order 12345 now", 6 / math.Sqrt(42)},
		// {ord} vs {status, ord}
		{"Where is my order?", "What's the status of my order?", 1 / math.Sqrt(2)},
		// multilingual re-asks
		{"Comment trier une liste en Python ?", "Pouvez-vous me montrer comment trier une liste en Python ?", 1},
		{"¿Cómo ordeno una lista?", "¿Puedes mostrarme cómo ordenar una lista?", 1},
		{"Wie sortiere ich eine Liste?", "Kannst du mir zeigen, wie man eine Liste sortiert?", 1},
		// {command} vs {command, 12}
		{"Où est ma commande ?", "Pouvez-vous me dire où est ma commande 12 ?", 1 / math.Sqrt(5)},
		{"Résumé du CAFÉ!!!", "resume du cafe", 1},
		// CJK bigrams: 3 shared of 3 and 7
		{"如何排序？", "请告诉我如何排序", 3 / math.Sqrt(21)},
		{"", "", 0},
		{"the of and", "the", 0},
		{"sort", "", 0},
		{"\xff\xfe sort", "sort 🙂", 1},
	}
	for _, tt := range tests {
		got := Similarity(tt.a, tt.b)
		assert.InDelta(t, tt.want, got, 1e-9, "Similarity(%q, %q)", tt.a, tt.b)
		assert.InDelta(t, got, Similarity(tt.b, tt.a), 1e-12, "symmetry for %q, %q", tt.a, tt.b)
	}
	// The seed's thresholds (CCM: re-ask >= 0.5, unrelated < 0.2).
	assert.GreaterOrEqual(t, Similarity("How do I sort?", "Can you show me how to sort?"), 0.5)
	assert.Less(t, Similarity("Process refund for order #12345", "What is the weather in Paris?"), 0.2)
	// Different ids in otherwise identical longer messages never reach the CCM threshold.
	long1 := "Please process the refund for order 12345 today, the customer is waiting for the money"
	long2 := strings.Replace(long1, "12345", "67890", 1)
	assert.Less(t, Similarity(long1, long2), 0.5)
	assert.Less(t, Similarity(long1, long2), Similarity(long1, long1)/2+1e-9)
}

func TestSimilarityCapsInput(t *testing.T) {
	base := strings.Repeat("refund order ", MaxInputBytes/len("refund order ")+10)
	// What follows the first MaxInputBytes bytes is ignored.
	assert.Equal(t, 1.0, Similarity(base, base+" weather paris 999"))
	assert.NotContains(t, Tokens(base+" weather"), "weath")
	// A multi-byte rune straddling the cap is cut before it, not split.
	s := strings.Repeat("a", MaxInputBytes-1) + "é"
	assert.Equal(t, MaxInputBytes-1, len(capInput(s)))
	// A word straddling the cap is dropped whole when white space precedes it within 256 bytes.
	s = strings.Repeat("a", MaxInputBytes-10) + " #1234567890"
	assert.Equal(t, MaxInputBytes-10, len(capInput(s)))
	// A word ending exactly at the cap is kept.
	s = strings.Repeat("a", MaxInputBytes-10) + " #12345678 x"
	assert.Equal(t, MaxInputBytes, len(capInput(s)))
	// A string that fits is returned whole.
	s = strings.Repeat("a", MaxInputBytes)
	assert.Equal(t, s, capInput(s))
}

// corpus of fragments for the property tests: words in several languages, ids, numbers, punctuation, emoji,
// CJK, invalid UTF-8.
var corpus = strings.Fields(`order orders refund refunds #12345 12345 67890 ORD-9 $1,200.50 1.234,5 sort sorting how do I
can you please show me the weather in Paris Café résumé commande remboursée pedido ordenar Bestellung sortieren
如何 排序 请告诉我 🙂 🚀 \xff \xc3 don't l'ordre , . ! ? ... - _ 2024-01-15 jane.doe@example.com https://x.io/a
NO yes maybe Straße ÆØÅ ǅ İstanbul 0 7 10 3.5 v1.2.3`)

func randomText(r *rand.Rand) string {
	n := r.IntN(12)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = corpus[r.IntN(len(corpus))]
	}
	sep := []string{" ", "", "\n", ", "}[r.IntN(4)]
	return strings.Join(parts, sep)
}

func TestSimilarityProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		a, b := randomText(r), randomText(r)
		s := Similarity(a, b)
		if s < 0 || s > 1 || math.IsNaN(s) {
			t.Fatalf("Similarity(%q, %q) = %v out of [0,1]", a, b, s)
		}
		if s2 := Similarity(b, a); s2 != s {
			t.Fatalf("not symmetric: %q, %q: %v vs %v", a, b, s, s2)
		}
		self := Similarity(a, a)
		if len(Tokens(a)) > 0 && self != 1 {
			t.Fatalf("Similarity(x, x) = %v for %q", self, a)
		}
		if len(Tokens(a)) == 0 && self != 0 {
			t.Fatalf("Similarity(x, x) = %v for %q without content tokens", self, a)
		}
	}
}

func FuzzSimilarity(f *testing.F) {
	f.Add("How do I sort?", "Can you show me how to sort?")
	f.Add("order 12345", "order 67890")
	f.Add("如何排序？", "请告诉我如何排序")
	f.Add("\xff\xfe", "1,2,3.4,5")
	f.Add("", "é")
	f.Fuzz(func(t *testing.T, a, b string) {
		s := Similarity(a, b)
		if s < 0 || s > 1 || math.IsNaN(s) {
			t.Fatalf("Similarity(%q, %q) = %v out of [0,1]", a, b, s)
		}
		if s2 := Similarity(b, a); s2 != s {
			t.Fatalf("not symmetric: %q, %q: %v vs %v", a, b, s, s2)
		}
		if len(Tokens(a)) > 0 && Similarity(a, a) != 1 {
			t.Fatalf("Similarity(x, x) != 1 for %q", a)
		}
	})
}
