// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of this file pin the fast paths of docs/decisions/text.md §9 to what they
// replace: each must answer exactly like the plain computation.

func TestWordTablesMatchTheirSets(t *testing.T) {
	for w := range stopSet {
		require.True(t, isStop([]byte(w)), w)
	}
	for w := range framingStems {
		require.True(t, isFramingStem([]byte(w)), w)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		for _, w := range strings.Fields(strings.ToLower(randomText(r))) {
			_, stop := stopSet[w]
			_, framing := framingStems[w]
			require.Equal(t, stop, isStop([]byte(w)), w)
			require.Equal(t, framing, isFramingStem([]byte(w)), w)
		}
	}
	assert.False(t, isStop(nil))
	assert.False(t, isStop([]byte("orderx")))
}

// naiveDistinct is the plain form of distinctTokens: first occurrences of Tokens(s), and
// the sorted distinct hashes.
func naiveDistinct(s string) ([]string, hashSet) {
	var out []string
	set := hashSet{}
	for _, t := range Tokens(s) {
		if !slices.Contains(out, t) {
			out = append(out, t)
			set = append(set, fnv(t))
		}
	}
	slices.Sort(set)
	return out, set
}

func TestDistinctTokensMatchesTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	texts := []string{"", "🙂", "a b c", strings.Repeat("order 12345 refund ", 200), "Wie sortiere ich eine Liste? Kannst du mir zeigen, wie man eine Liste sortiert?"}
	for range 5000 {
		texts = append(texts, randomText(r)+" "+randomText(r))
	}
	for _, s := range texts {
		got, gotSet := distinctTokens(s)
		want, wantSet := naiveDistinct(s)
		require.Equal(t, want, got, "%q", s)
		require.Equal(t, wantSet, gotSet, "%q", s)
		require.NotNil(t, gotSet)
	}
}

// TestWordMemoIsTransparent: tokens are the same with the per-word memo cold, warm, and
// under concurrent scans that evict each other's entries.
func TestWordMemoIsTransparent(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var texts []string
	for i := range 2000 {
		texts = append(texts, randomText(r)+fmt.Sprintf(" word%dx Sortierung%d", i, i))
	}
	clearWordMemo := func() {
		for i := range wordMemo {
			wordMemo[i].Store(nil)
		}
	}
	clearWordMemo()
	cold := make([][]string, len(texts))
	for i, s := range texts {
		cold[i] = Tokens(s)
	}
	for i, s := range texts {
		require.Equal(t, cold[i], Tokens(s), "warm memo: %q", s)
	}
	clearWordMemo()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range texts {
				i := (k*7 + g*131) % len(texts)
				if got := Tokens(texts[i]); !slices.Equal(got, cold[i]) {
					errs <- fmt.Sprintf("%q: %q, want %q", texts[i], got, cold[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestUngroundedFactsIsUngrounded(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		resp, a, b := randomText(r)+" Jane Doe paid $12.50 on 2024-03-04 for #77123", randomText(r), randomText(r)
		require.Equal(t, Ungrounded(resp, a, b), UngroundedFacts(SalientFacts(resp), a, b), "%q", resp)
	}
	assert.Nil(t, UngroundedFacts(nil, "anything"))
}

// TestSalientFactsOutliveTheExtractor: the pooled extractor buffers are reused by later
// extractions; facts already returned must not change.
func TestSalientFactsOutliveTheExtractor(t *testing.T) {
	first := SalientFacts("Refund R-10001 of €1.200,50 to Jane Doe (jane@example.com) on 15. März 2024, see https://x.io/r")
	want := slices.Clone(first)
	r := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		SalientFacts(randomText(r) + " ORDER-55 Berlin 03/04/2024")
		Found(first, randomText(r))
	}
	require.NotEmpty(t, want)
	assert.Equal(t, want, first)
}

// TestMentionsNameMemo: more names than the name memo has entries, looked for twice,
// give the same mentions.
func TestMentionsNameMemo(t *testing.T) {
	names := make([]string, 0, 3*nameMemoSize)
	for i := range 3 * nameMemoSize {
		names = append(names, fmt.Sprintf("tool_%d_refundOrder", i))
	}
	s := "call tool 7 refund order, then Tool_2047_RefundOrder and TOOL-3000-REFUND-ORDER"
	first := Mentions(s, names)
	assert.Equal(t, []string{"tool_7_refundOrder", "tool_2047_refundOrder", "tool_3000_refundOrder"}, first)
	assert.Equal(t, first, Mentions(s, names))
}

func TestCoreBoundsMatchIndexFunc(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	texts := []string{"", "#", "%", "$", "€", "\xff", "--#12%--", "«ORD-9»", "…50€…", "é\u0301"}
	for range 5000 {
		texts = append(texts, randomText(r)+"\xc3"+"%#$€(")
	}
	for _, raw := range texts {
		want := strings.IndexFunc(raw, func(r rune) bool { return isAlnum(r) || r == '#' || isCurrencySym(r) })
		require.Equal(t, want, coreStart(raw), "%q", raw)
		wantLast := strings.LastIndexFunc(raw, func(r rune) bool { return isAlnum(r) || r == '%' || isCurrencySym(r) })
		require.Equal(t, wantLast, coreLast(raw), "%q", raw)
	}
}

// TestLongWordsBypassTheMemo: words longer than maxMemoWord are stemmed without the memo,
// with the same rules.
func TestLongWordsBypassTheMemo(t *testing.T) {
	long := strings.Repeat("ab", maxMemoWord)
	assert.Equal(t, []string{long}, Tokens(long+"ing"))
	assert.Equal(t, []string{long + "qui"}, Tokens(strings.ToUpper(long)+"QUIES"))
	assert.Equal(t, []string{"sort", long}, Tokens("sorting "+long+"s"))
}

// TestIndexesAreReusable: indexes shared between lookups over overlapping sets of texts
// (as the evaluator's memo shares them) answer like fresh ones, and an id whose digit runs
// sit in different texts is found in them together (docs/decisions/text.md §6).
func TestIndexesAreReusable(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for range 2000 {
		resp := randomText(r) + " Jane Doe paid $12.50 on 2024-03-04 for #77123, see www.x.io, mail jane@x.io at 12:30"
		texts := []string{randomText(r) + " jane doe", randomText(r) + " 77123 $12.5", randomText(r) + " WWW.X.IO/a 12:30", randomText(r)}
		idx := make([]*Index, len(texts))
		for i, s := range texts {
			idx[i] = NewIndex(s)
		}
		stated := SalientFacts(resp)
		for n := 1; n <= len(texts); n++ {
			require.Equal(t, UngroundedFacts(stated, texts[:n]...), UngroundedIn(stated, idx[:n]...), "%q in %q", resp, texts[:n])
			require.Equal(t, FoundIn(stated, NewIndex(texts[n-1])), FoundIn(stated, idx[n-1]))
		}
	}
	id := []Fact{{Kind: KindID, Value: "ORD-12345-678"}}
	assert.Equal(t, []bool{false}, FoundIn(id, NewIndex("order 12345")))
	assert.Equal(t, []bool{true}, FoundIn(id, NewIndex("order 12345"), NewIndex("line 678")))
	assert.Nil(t, UngroundedIn([]Fact{{Kind: KindNumber, Value: "3"}, {Kind: KindQuoted, Value: "x"}}))
	// Past smallIndex keys the index moves to a map: every key is still found.
	var many []string
	var facts []Fact
	for i := range 3 * smallIndex {
		many = append(many, fmt.Sprintf("ORD-%d", 1000+i))
		facts = append(facts, Fact{Kind: KindID, Value: fmt.Sprintf("ord%d", 1000+i)}, Fact{Kind: KindNumber, Value: fmt.Sprint(1000 + i)})
	}
	big := NewIndex(strings.Join(many, ", "))
	for i, found := range FoundIn(append(facts, Fact{Kind: KindNumber, Value: "999"}), big) {
		assert.Equal(t, i < len(facts), found, i)
	}
	assert.False(t, NeedGrounding([]Fact{{Kind: KindNumber, Value: "10"}}))
	assert.True(t, NeedGrounding([]Fact{{Kind: KindNumber, Value: "11"}}))
}

// TestAnalyzeIsSalientFactsAndNewIndex: the one lexing of Analyze gives what the two
// separate extractions give.
func TestAnalyzeIsSalientFactsAndNewIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	texts := []string{"", " ", `"2024-03-04" and 'March 4, 2024' at www.x.io`, "```\nMarch 2024 #123\n```", strings.Repeat("order #12345 on 4 mars 2024 ", 5000)}
	for range 5000 {
		texts = append(texts, randomText(r)+` "Jane Doe" paid $12.50 on March 4, 2024 for #77123 (https://x.io/a) `+randomText(r))
	}
	for _, s := range texts {
		facts, idx := Analyze(s)
		require.Equal(t, SalientFacts(s), facts, "%q", s)
		n := NewIndex(s)
		if !n.lexed {
			n.lex() // NewIndex lexes on first need (a look-up of an id or a date)
		}
		require.Equal(t, n, idx, "%q", s)
	}
}

// TestLazyIndexAnswersAsLexed pins NewIndex's deferred lexing: an index that lexes on
// the first look-up that needs an id or a date key answers every look-up like one lexed
// up front, alone and together with others (an id's digit runs in two texts).
func TestLazyIndexAnswersAsLexed(t *testing.T) {
	frags := []string{"ORD-12345", "order 12345", "INV-2231", "#2231", "id 0042", "42", "$120.50", "120.5",
		"1,200.50", "March 4, 2024", "4 March 2024", "2024-03-04", "03/04/2024", "--03-04", "2024-03",
		"RF-881", "881", "INV-22-31", "inv2231", "Ab-1c", "ab1c", "ÀB-9Z", "àb9z", "a@b.io", "https://www.x.io/a", "Jane Doe", "10:30", "v2.3.1", "12-34-56", "A1B2C3"}
	r := rand.New(rand.NewPCG(21, 22))
	text := func() string {
		n := r.IntN(6)
		parts := make([]string, 0, 2*n)
		for range n {
			parts = append(parts, frags[r.IntN(len(frags))], randomText(r))
		}
		return strings.Join(parts, []string{" ", "\n", ", ", ""}[r.IntN(4)])
	}
	lexedIndex := func(s string) *Index {
		_, h := Analyze(s) // lexed up front
		return h
	}
	for range 5000 {
		facts := SalientFacts(text() + " " + text())
		a, b := text(), text()
		require.Equal(t, FoundIn(facts, lexedIndex(a)), FoundIn(facts, NewIndex(a)), "%q", a)
		require.Equal(t, FoundIn(facts, lexedIndex(a), lexedIndex(b)), FoundIn(facts, NewIndex(a), NewIndex(b)), "%q | %q", a, b)
		if len(facts) > 0 {
			require.Equal(t, CoverageIn(facts, lexedIndex(b)), CoverageIn(facts, NewIndex(b)), "%q", b)
		}
	}
}
