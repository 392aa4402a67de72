// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func id(v string) Fact     { return Fact{KindID, v} }
func num(v string) Fact    { return Fact{KindNumber, v} }
func amount(v string) Fact { return Fact{KindAmount, v} }
func date(v string) Fact   { return Fact{KindDate, v} }
func name(v string) Fact   { return Fact{KindName, v} }
func quoted(v string) Fact { return Fact{KindQuoted, v} }

func TestSalientFacts(t *testing.T) {
	tests := []struct {
		in   string
		want []Fact
	}{
		{"Process refund for order #12345", []Fact{id("12345")}},
		{"#12345 and 12345", []Fact{id("12345")}},
		{"Charged $1,200.50 on the card", []Fact{amount("1200.50")}},
		{"Pay 1.200,50 € or EUR 20 or 50 USD or 30usd", []Fact{amount("1200.50"), amount("20"), amount("50"), amount("30")}},
		{"Delivered on 2024-01-15, 15/01/2024, 01/15/2024, 2024-01-15T10:00Z, 03/04/2024 and 2024-02-30",
			[]Fact{date("2024-01-15"), date("03/04/2024"), id("2024-02-30")}},
		{"Shipped March 3rd, 2024; due 15 de enero de 2024, le 1er janvier 2025, am 15. Januar 2024, by Jan 15 or in May 2024",
			[]Fact{date("2024-03-03"), date("2024-01-15"), date("2025-01-01"), date("--01-15"), date("2024-05")}},
		{"Mail Jane.Doe@Example.COM or see <https://Shop.example.com/Orders/12345/>.",
			[]Fact{{KindEmail, "jane.doe@example.com"}, {KindURL, "https://shop.example.com/orders/12345"}}},
		{"Search for \"Blue Widget\" and 'red   gadget', use “smart quotes”, «guillemets», and `refund_order` but don't split apostrophes",
			[]Fact{quoted("blue widget"), name("blue widget"), quoted("red gadget"), quoted("smart quotes"), quoted("guillemets"), quoted("refund_order")}},
		{"I asked for Python, not JavaScript!", []Fact{name("python"), name("javascript")}},
		{"Please send it to Jane Doe in New York.", []Fact{name("jane doe"), name("new york")}},
		{"The API returned OK on Monday in March", []Fact{name("api")}},
		{"## Order Summary\nTotal for Jane", []Fact{name("jane")}},
		{"This is Jane's order", []Fact{name("jane")}},
		{"Steps:\n1. Open Settings\n2) Click Save\n10. Done", []Fact{name("settings"), name("save")}},
		{"It costs 3.50 and takes 10:30 to 45 minutes, 15% of 0042 and 1,234,567 items, 2nd try, 5kg, range 1-2, 24/7",
			[]Fact{num("3.50"), num("10:30"), num("45"), num("15"), num("42"), num("1234567"), num("2"), num("5"), num("1"), num("24"), num("7")}},
		{"Ticket ORD-98765, user_42, A1B2, v1.2.3, gpt-4o and 123-456-7890",
			[]Fact{id("ord-98765"), id("user_42"), id("a1b2"), id("v1.2.3"), id("gpt-4o"), id("123-456-7890")}},
		{`{"order_id":"ORD-12345","amount":1200.5,"customer":"Jane Doe"}`,
			[]Fact{quoted("ord-12345"), id("ord-12345"), num("1200.5"), quoted("jane doe"), name("jane doe")}},
		{"订单12345号已退款", []Fact{id("订单12345号已退款")}},
		{"order 1,,2 of 5..000", []Fact{id("1,,2"), id("5..000")}}, // a doubled separator makes no number
		{"hello there", nil},
		{"", nil},
		{"\xff\xfe 🙂", nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, SalientFacts(tt.in), "SalientFacts(%q)", tt.in)
	}
}

func TestNumberParts(t *testing.T) {
	tests := map[string]string{ // input -> canonical value (decimals kept)
		"1,200.50": "1200.50", "1.200,50": "1200.50", "1,200": "1200", "3,5": "3.5", "0,500": "0.500",
		"1.200": "1.200", "1,234,567": "1234567", "1.234.567": "1234567", "007.50": "7.50",
		"1.2.3": "1.2.3", "1,2,3": "1.2.3", "1,23": "1.23", "12,34.5": "12.34.5",
		"1.234.567,89": "1234567.89", "1,234,567.8": "1234567.8", "1.23,4": "1.23.4", "1,234.5.6": "1.234.5.6",
		"0,5": "0.5", "00,5": "0.5", "1,2345": "1.2345", "1234,567": "1234.567", "0,123.4": "0.123.4",
	}
	for in, want := range tests {
		assert.Equal(t, want, string(appendNumberKey(nil, []byte(in), false)), "number %q", in)
	}
	assert.Equal(t, "1200.5", numKey("1200.50"))
	assert.Equal(t, "1200", numKey("1200.00"))
	assert.Equal(t, "1.2.3", numKey("1.2.3"))
	assert.Equal(t, "10:30", numKey("10:30"))
}

func TestCoverage(t *testing.T) {
	facts := []Fact{id("12345"), amount("1200.50"), name("jane doe")}
	tests := []struct {
		name    string
		facts   []Fact
		context string
		payload string
		want    float64
		ok      bool
	}{
		{"two of three", facts, "", `{"order":"12345","amount":"1200.5"}`, 2.0 / 3, true},
		{"all, other formatting", facts, "", "Refund ORD-12345 for JANE DOE: 1,200.50 USD", 1, true},
		{"empty payload", facts, "", "", 0, true},
		{"content words", nil, "Process refund for order", "refund the order", 2.0 / 3, true},
		{"distinct content words", nil, "sort sort list", "list", 0.5, true},
		{"nothing to cover", nil, "the of", "anything", 0, false},
		{"nothing at all", nil, "", "", 0, false},
		{"date by month name", []Fact{date("2024-01-15")}, "", "on 15 January 2024", 1, true},
		{"date by d/m/y", []Fact{date("2024-01-15")}, "", "on 15/01/2024", 1, true},
		{"date by year-less", []Fact{date("2024-01-15")}, "", "on Jan 15", 1, true},
		{"other date", []Fact{date("2024-01-15")}, "", "on 2024-01-16", 0, true},
		{"year-less by full", []Fact{date("--01-15")}, "", "2024-01-15", 1, true},
		{"ambiguous d/m", []Fact{date("03/04/2024")}, "", "2024-04-03", 1, true},
		{"ambiguous m/d", []Fact{date("03/04/2024")}, "", "2024-03-04", 1, true},
		{"ambiguous neither", []Fact{date("03/04/2024")}, "", "2024-05-05", 0, true},
		{"email", []Fact{{KindEmail, "jane.doe@example.com"}}, "", "Contact: Jane.Doe@example.com", 1, true},
		{"url", []Fact{{KindURL, "https://shop.example.com/orders/12345"}}, "", "see shop.example.com/orders/12345?x=1", 1, true},
		{"quoted", []Fact{quoted("blue widget")}, "", "the Blue-Widget item", 1, true},
		{"number formats", []Fact{num("1200.50")}, "", "total 1.200,50", 1, true},
		{"id by digits", []Fact{id("ord-12345")}, "", "order 12345", 1, true},
		{"id compact", []Fact{id("ord-12345")}, "", "ORD12345", 1, true},
		{"id other digits", []Fact{id("ord-12345")}, "", "order 1234", 0, true},
		{"cjk id", SalientFacts("订单12345号已退款"), "", "order 12345", 1, true},
	}
	for _, tt := range tests {
		got, ok := Coverage(tt.facts, tt.context, tt.payload)
		assert.Equal(t, tt.ok, ok, tt.name)
		assert.InDelta(t, tt.want, got, 1e-9, tt.name)
	}
}

func TestCoverageRange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		ctx, payload := randomText(r), randomText(r)
		got, ok := Coverage(SalientFacts(ctx), ctx, payload)
		if got < 0 || got > 1 || !ok && got != 0 {
			t.Fatalf("Coverage(%q, %q) = %v, %v", ctx, payload, got, ok)
		}
		// Everything is covered by itself.
		if self, ok := Coverage(SalientFacts(ctx), ctx, ctx); ok && self != 1 {
			t.Fatalf("Coverage of %q by itself = %v (facts %v)", ctx, self, SalientFacts(ctx))
		}
	}
}

func TestUngrounded(t *testing.T) {
	tests := []struct {
		name     string
		response string
		sources  []string
		want     []Fact
	}{
		{"mixed", "Your refund of $1,200.50 for order ORD-12345 was sent to Jane Doe on 2024-01-15. It takes 3 days. Reference R-99812.",
			[]string{"refund order 12345 amount 1200.5", `{"customer":"jane doe","date":"15/01/2024"}`}, []Fact{id("r-99812")}},
		{"list markers and small counts", "Here are 3 options:\n1. Sort\n2. Filter\n12 results found", nil, []Fact{num("12")}},
		{"name", "The capital is Paris.", []string{"what is the capital of france"}, []Fact{name("paris")}},
		{"name grounded case-insensitively", "The capital is Paris.", []string{"weather in paris"}, nil},
		{"amounts are always specifics", "That costs $5.", nil, []Fact{amount("5")}},
		{"quoted strings are not specifics", `Use "foo bar" as the name`, nil, nil},
		{"email", "Write to help@acme.io", nil, []Fact{{KindEmail, "help@acme.io"}}},
		{"date grounded by a year-less date", "Delivered 2024-01-15", []string{"delivered Jan 15"}, nil},
		{"url grounded", "See https://docs.acme.io/a", []string{"docs at https://docs.acme.io/a/"}, nil},
		{"second source", "Order 55555 shipped", []string{"nothing", "id=55555"}, nil},
		{"no sources", "Order 55555 shipped", nil, []Fact{id("55555")}},
		{"nothing specific", "Sure, done.", []string{"x"}, nil},
		// An amount stands alone in its source: digits inside a timestamp, a date, an id,
		// a phone number or a time do not ground money; a plain number keeps them.
		{"amount in a timestamp", "A refund of $50 in 15 days.", []string{`{"issued_at":"2026-11-27T09:15:50Z"}`}, []Fact{amount("50")}},
		{"amount in an order id", "Your order came to $150.", []string{`{"id":"ORD-2024-0150"}`}, []Fact{amount("150")}},
		{"amount in a date", "It costs $27.", []string{"updated 2026-11-27"}, []Fact{amount("27")}},
		{"amount in a phone number", "Express costs 100 €.", []string{"hotline 01 45 10-0100"}, []Fact{amount("100")}},
		{"amount in a code", "It costs 245 €.", []string{"booking HX245-B"}, []Fact{amount("245")}},
		{"number in an id", "Order 0150 ships today.", []string{"ORD-2024-0150"}, nil},
		{"amount beside ids", "Refund $50.00 for ORD-2024-0150.", []string{`{"order":"ORD-2024-0150","amount":50,"at":"2026-11-27T09:15:50Z"}`}, nil},
		{"amount after a currency code", "Your balance is $1,250.40.", []string{`{"balance":"USD1250.40"}`}, nil},
		{"amount per month", "Premium is $29 a month.", []string{`{"price":"$29/month"}`}, nil},
		{"negative amount", "Su saldo es de -35,20 €.", []string{`{"saldo":-35.20}`}, nil},
		{"amounts of a range", "Between $10 and $20.", []string{`{"price_range":"10-20"}`}, nil},
		{"amounts of a JSON array", "Two fees: $10 and $20.", []string{`{"fees":[10,20]}`}, nil},
		{"amount in a CSV row", "The widget costs $45.", []string{"item,qty,price\nWidget,2,45.00"}, nil},
		{"amount after an escaped euro", "It is €45.", []string{`{"price":"\u20ac45.00"}`}, nil},
		{"amount in an id with a dash", "Your invoice is 1042 €.", []string{`{"invoice":"INV-1042"}`}, []Fact{amount("1042")}},
		{"amount in a percentage", "A discount of $15.", []string{`{"discount":"15%"}`}, []Fact{amount("15")}},
		{"amount in a month-name date", "It costs $27.", []string{"updated Nov 27, 2026"}, []Fact{amount("27")}},
		// Times on the 12-hour clock, their marker no name; German nouns, titles and
		// counts joined to their unit are no specifics.
		{"12-hour time", "See you at 2:40 PM.", []string{`{"time":"14:40"}`}, nil},
		{"12-hour time, a.m.", "Doors open at 9:31 a.m.", []string{`{"at":"2026-06-05T09:31:00+01:00"}`}, nil},
		{"midnight hour", "Cancel by 12:15 AM.", []string{`{"deadline":"00:15"}`}, nil},
		{"glued marker", "See you at 2:40PM.", []string{`{"time":"14:40"}`}, nil},
		{"dotted time with marker", "See you at 2.40pm.", []string{`{"time":"14:40"}`}, nil},
		{"hour with marker", "We close at 11 PM.", []string{`{"close":"23:00"}`}, nil},
		{"hour with glued marker, source compact", "Pickup at 9am.", []string{"pickup Friday 9am"}, nil},
		{"French time", "Rendez-vous à 14h40.", []string{`{"debut":"2026-04-09T14:40:00+02:00"}`}, nil},
		{"German dotted time", "Der Termin ist um 14.40 Uhr.", []string{`{"termin":"14:40"}`}, nil},
		{"time range with marker", "Delivery between 2:00-4:00 PM.", []string{`{"from":"14:00","to":"16:00"}`}, nil},
		{"24-hour time range", "Die Zustellung ist heute zwischen 14:00-16:00 Uhr.", []string{`{"von":"2026-03-17T14:00:00+01:00","bis":"2026-03-17T16:00:00+01:00"}`}, nil},
		{"wrong time range", "Delivery between 2:00-5:00 PM.", []string{`{"from":"14:00","to":"16:00"}`}, []Fact{num("5:00 pm")}},
		{"wrong hour with marker", "We close at 10 PM.", []string{`{"close":"23:00"}`}, []Fact{num("10:00 pm")}},
		{"a decimal is no time", "It weighs 14.40 kg.", []string{`{"time":"14:40"}`}, []Fact{num("14.40")}},
		{"wrong 12-hour time", "See you at 3:40 PM.", []string{`{"time":"14:40"}`}, []Fact{num("3:40 pm")}},
		{"German nouns", "Ihre Rechnung ist bezahlt, die Gutschrift folgt mit dem Kontoauszug.", []string{`{"status":"paid"}`}, nil},
		{"German name of two words", "Ihr Berater ist Klaus Becker, die Rechnung folgt.", []string{`{"advisor":"Anna Schulz"}`}, []Fact{name("klaus becker")}},
		{"title", "Your doctor is Dr. Amal Singh.", []string{"Amal Singh, MD"}, nil},
		{"count and unit", "A 3-night stay with a 30-day window.", []string{`{"nights":3,"days":30}`}, nil},
		{"invented count and unit", "A 45-day window.", []string{`{"days":30}`}, []Fact{id("45-day")}},
		{"small invented count and unit", "A 7-day window.", []string{`{"days":14}`}, []Fact{id("7-day")}},
		// Thousands grouped with spaces, in the response and in a source.
		{"space-grouped amount", "Le total est de 1 234,50 €.", []string{`{"total":1234.5}`}, nil},
		{"space-grouped amount, no-break spaces", "Le total est de 12\u00a0500 EUR.", []string{`{"total":"12500.00"}`}, nil},
		{"space-grouped source", "Der Betrag ist 1.234,50 €.", []string{`{"betrag":"1 234,50 EUR"}`}, nil},
		{"a group of a grouped source", "It is $234.50.", []string{`{"total":"1 234,50 EUR"}`}, []Fact{amount("234.50")}},
		{"a phone number's group", "Pagará 482,00 €.", []string{`{"phone":"+34 910 555 482"}`}, []Fact{amount("482.00")}},
		{"an amount after an id and a space", "You paid 450.00 EUR.", []string{"Order 58213 450.00 EUR paid"}, nil},
		{"an amount after a time and a space", "You paid 120.00 EUR.", []string{"2026-05-02 14:30 120.00 EUR"}, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Ungrounded(tt.response, tt.sources...), tt.name)
	}
}

// TestStandsAlone: which number-like runs are values of their own (amount keys).
func TestStandsAlone(t *testing.T) {
	for _, tc := range []struct {
		s    string
		run  string
		want bool
	}{
		{`"amount":50,`, "50", true},
		{"USD1250.40", "1250.40", true},
		{"$29/month", "29", true},
		{"saldo -35.20", "35.20", true},
		{"1,200.50 EUR", "1,200.50", true},
		{"2026-11-27T09:15:50Z", "27", false},
		{"2026-11-27T09:15:50Z", "15", false},
		{"2026-11-27T09:15:50Z", "2026", false},
		{"ORD-2024-0150", "0150", false},
		{"ORD-2024-0150", "2024", false},
		{"HX245-B", "245", false},
		{"gate B45", "45", false},
		{"11/27/2026", "27", false},
		{"14:30", "30", false},
		{"2026\\/11\\/27", "11", false},
		// A range of two runs, ascending, no leading zero, nothing else joined.
		{"10-20 USD", "10", true},
		{"10-20 USD", "20", true},
		{"1,200-1,500 EUR", "1,500", true},
		{"20-10", "10", false},
		{"010-0100", "0100", false},
		// Ids, and what is no id.
		{"INV-1042", "1042", false},
		{"TKT_45", "45", false},
		{"#150", "150", false},
		{"EUR-45", "45", true},
		{"Rs500", "500", true},
		{`"Betrag:\n45,00 EUR"`, "45,00", true},
		{`"\u20ac45.00"`, "45.00", true},
		{"2x22.50", "22.50", true},
		{"item2:45.00", "45.00", true},
		// Percentages and days of a month.
		{"15% off", "15", false},
		{"15 % off", "15", false},
		{"Nov 27, 2026", "27", false},
		{"Nov. 27", "27", false},
		{"27 March 2026", "27", false},
		{"27 items", "27", true},
	} {
		i := strings.Index(tc.s, tc.run)
		require.GreaterOrEqual(t, i, 0)
		assert.Equal(t, tc.want, standsAlone(tc.s, i, i+len(tc.run)), "%q in %q", tc.run, tc.s)
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		s     string
		names []string
		want  []string
	}{
		{"I will call refundOrder then hand off to the Billing-Agent", []string{"refund_order", "billing_agent", "lookup", "refund_order"},
			[]string{"refund_order", "billing_agent"}},
		{"use refund order now", []string{"refund_order"}, []string{"refund_order"}},
		{"REFUND_ORDER", []string{"refundOrder"}, []string{"refundOrder"}},
		{"call refundorder", []string{"refund_order"}, []string{"refund_order"}},
		{"refund orders", []string{"refund_order"}, nil},
		{"reorder", []string{"order"}, nil},
		{"HTTPServer started", []string{"http_server"}, []string{"http_server"}},
		{"call gpt4", []string{"gpt-4"}, []string{"gpt-4"}},
		{"Réservation faite", []string{"reservation"}, []string{"reservation"}},
		{"x marks the spot", []string{"", "__", "x"}, []string{"x"}},
		{"b then a", []string{"a", "b"}, []string{"a", "b"}},
		{"anything", nil, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Mentions(tt.s, tt.names), "Mentions(%q, %q)", tt.s, tt.names)
	}
	assert.Equal(t, " http server started ", identWords("HTTPServer started"))
	assert.Equal(t, " refund order v 2 ", identWords("refundOrder_v2"))
}

func TestLongInputs(t *testing.T) {
	long := strings.Repeat("Refund order #12345 for Jane Doe. ", 100_000) // ~3.4 MB
	assert.Equal(t, []Fact{id("12345"), name("jane doe")}, SalientFacts(long))
	score, ok := Coverage(SalientFacts(long), long, long)
	assert.True(t, ok)
	assert.Equal(t, 1.0, score)
	assert.Nil(t, Ungrounded(long, long))
	ok2, _, _ := Correction(long, long)
	assert.False(t, ok2)
	assert.False(t, Refusal(long))
	assert.Equal(t, []string{"refund_order"}, Mentions(long, []string{"refund_order"}))
}

// TestWithoutDerived: numbers a response derives in writing from grounded values (a
// percentage, a unit conversion) are not ungrounded; made-up ones, wrong ones and ones
// derived from made-up operands stay (decisions/text.md §6.1).
func TestWithoutDerived(t *testing.T) {
	tests := []struct {
		response string
		sources  []string
		want     []string // the values left ungrounded
	}{
		{"20% of $350 is $70.", []string{"What's 20% of $350?"}, nil},
		{"20 % de 350 € font 70 €.", []string{"Combien font 20 % de 350 € ?"}, nil},
		{"20\u00a0% de 350 € font 70 €.", []string{"Combien font 20 % de 350 € ?"}, nil},
		{"12.50% of $80 is $10.", []string{"12.5% of $80?"}, nil},
		{"20% of $349 is $69.80.", []string{"What's 20% of $349?"}, nil},
		{"It's 20°C (68°F) in Lisbon.", []string{`{"temp_c": 20}`, "Lisbon"}, nil},
		{"It's -5 °C (23 °F).", []string{`{"temp_c": -5}`}, nil},
		{"14 km is about 8.7 miles.", []string{"distance_km: 14"}, nil},
		{"1,000 miles is roughly 1,600 km.", []string{"1000 miles"}, nil},
		{"Your balance is $1,523.75 + $300 = $1,823.75.", []string{"I deposited $300", `{"balance": 1523.75}`}, nil},
		{"Total: 3 × $18.50 = $55.50.", []string{"3 adult tickets", `{"price_adult": 18.5}`}, nil},
		{"1,200 - 350 - 125 = 725 left this month.", []string{"budget 1200", "rent 350, food 125"}, nil},
		{"1,000 + 100 + 100 + 100 + 100 + 100 + 100 + 100 = 1,700", []string{"1000 then 100 a day"}, nil}, // 8 operands
		// Wrong results, the wrong direction, invented operands, other arithmetic, a chain
		// longer than maxOperands: kept.
		{"1,000 + 100 + 100 + 100 + 100 + 100 + 100 + 100 + 100 = 1,800", []string{"1000 then 100 a day"}, []string{"1800"}},
		{"Your balance is $1,523.75 + $300 = $1,223.75.", []string{"I deposited $300", `{"balance": 1523.75}`}, []string{"1223.75"}},
		{"Your balance is $1,523.75 + $250 = $1,773.75.", []string{"I deposited $300", `{"balance": 1523.75}`}, []string{"250", "1773.75"}},
		{"Total: 3 × $18.50 = $58.50.", []string{"3 adult tickets", `{"price_adult": 18.5}`}, []string{"58.50"}},
		{"3 tickets: $18.50 + $18.50 = $55.50.", []string{"3 adult tickets", `{"price_adult": 18.5}`}, []string{"55.50"}},
		// Only "operands = result" is read: not "is", not the result first.
		{"12 + 30 is 42, so 42 = 40 + 2 and 87 = 12 + 30.", []string{"12 and 30"}, []string{"42", "40", "87"}},
		// An operand with a sign, which the facts drop: not read (a review's leaks).
		{"-$50 + $100 = $150 on your account.", []string{`{"balance": -50}`, "I paid in $100"}, []string{"150"}},
		{"Solde : −150 € + 400 € = 550 €.", []string{`{"solde": -150}`, "virement 400 €"}, []string{"550"}},
		// Totals after a tax or a discount are not read, even when right (the review of a
		// rule that read them by their cue words let 13 wrong totals pass).
		{"Mit 10 % Rabatt kostet das Fahrrad 108 € statt 120 €.", []string{"Was kostet das Fahrrad mit 10 % Rabatt?", `{"preis": 120}`}, []string{"108"}},
		{"With the 8% sales tax, your $50 order comes to $54.", []string{"sales tax 8%", "order total 50"}, []string{"54"}},
		{"20% of $350 is $75.", []string{"What's 20% of $350?"}, []string{"75"}},
		{"It's 20°C (72°F) in Lisbon.", []string{`{"temp_c": 20}`, "Lisbon"}, []string{"72"}},
		{"-10 °C (50 °F)", []string{`{"temp_c": -10}`}, []string{"50"}},
		{"50 lb is about 110 kg.", []string{"50 lb"}, []string{"110"}},
		{"About $42 a year on your $2,000.", []string{"rate 2.1%"}, []string{"42", "2000"}},
		{"At 5% interest your $2,400 earns $120.", []string{"balance 2400"}, []string{"120"}},
		{"With a 20% discount you pay $280.", []string{`{"price": 350, "stock": 20}`}, []string{"280"}},
		{"3 tickets at $15 each come to $45 in total.", []string{"price 15"}, []string{"45"}},
		{"The gate is C, delayed by 77 minutes.", []string{"temp 25"}, []string{"77"}},
	}
	for _, tt := range tests {
		idx := make([]*Index, len(tt.sources))
		for i, s := range tt.sources {
			idx[i] = NewIndex(s)
		}
		stated := SalientFacts(tt.response)
		got := WithoutDerived(UngroundedIn(stated, idx...), stated, tt.response, idx...)
		var vals []string
		for _, f := range got {
			vals = append(vals, f.Value)
		}
		assert.Equal(t, tt.want, vals, "%q", tt.response)
	}
	assert.Nil(t, WithoutDerived(nil, SalientFacts("$70"), "$70"))
}
