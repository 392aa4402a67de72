// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import (
	"strings"
	"unicode/utf8"
)

// cueNorm normalises s for phrase matching: capped (MaxInputBytes), lower-cased and accent-folded;
// apostrophes (' ’ ‘ ʼ) removed so "that's" = "thats", "c'est" = "cest"; every other character that is
// not a letter or digit is a word break; words are joined by single spaces and the result is padded with one
// space at each end (" no i meant order 123 "), so a phrase p matches on word boundaries iff the padded
// text contains " "+p+" ".
func cueNorm(s string) string {
	s = capInput(s)
	var stack [smallText]byte // most texts are built here: one allocation, the string
	b := stack[:0]
	if len(s)+2 > len(stack) {
		b = make([]byte, 0, len(s)+2)
	}
	b = append(b, ' ')
	b = appendCueNorm(b, s)
	if b[len(b)-1] != ' ' {
		b = append(b, ' ')
	}
	return string(b)
}

// appendCueNorm appends the words of s, normalised as cueNorm does, to b, which ends with a
// space; the result ends with a word or with that space (no trailing space is added).
func appendCueNorm(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			// ASCII fast path: the cases below for a one-byte rune.
			i++
			switch {
			case asciiClass[c]&clAlnum != 0:
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
			case c == '\'':
			default:
				if b[len(b)-1] != ' ' {
					b = append(b, ' ')
				}
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r < utf8.RuneSelf && asciiClass[r]&clAlnum != 0:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b = append(b, byte(r))
		case r == '\'' || r == '’' || r == '‘' || r == 'ʼ':
		case isAlnum(r):
			b = appendFold(b, r)
		case isMark(r):
		default:
			if b[len(b)-1] != ' ' {
				b = append(b, ' ')
			}
		}
	}
	return b
}

// cue is a phrase (written naturally, matched through cueNorm) and the confidence it carries.
type cue struct {
	phrase string
	conf   float64
	norm   string // cueNorm(phrase), padded with one space at each end
}

func cues(conf float64, phrases ...string) []cue {
	out := make([]cue, len(phrases))
	for i, p := range phrases {
		out[i] = cue{phrase: p, conf: conf, norm: cueNorm(p)}
	}
	return out
}

// cueIndex finds cues in cueNorm'ed text by their first word.
type cueIndex struct {
	cues    []cue
	byFirst map[string][]int // first word -> indexes into cues, in list order
}

func newCueIndex(cs []cue) *cueIndex {
	x := &cueIndex{cues: cs, byFirst: map[string][]int{}}
	for i, c := range cs {
		first, _, _ := strings.Cut(strings.TrimSpace(c.norm), " ")
		x.byFirst[first] = append(x.byFirst[first], i)
	}
	return x
}

// each calls fn(i, pos) for every occurrence of cue i at byte offset pos of the padded text n (pos is the
// offset of the space before the cue), in text order; fn returns false to stop.
func (x *cueIndex) each(n string, fn func(i, pos int) bool) {
	for pos := 0; pos < len(n)-1; {
		end := strings.IndexByte(n[pos+1:], ' ')
		if end < 0 {
			return
		}
		for _, i := range x.byFirst[n[pos+1:pos+1+end]] {
			if strings.HasPrefix(n[pos:], x.cues[i].norm) && !fn(i, pos) {
				return
			}
		}
		pos += 1 + end
	}
}

func concat(lists ...[]cue) []cue {
	var out []cue
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// correctionCues are the RDM phrases matched anywhere in the follow-up (docs/decisions/text.md §3).
var correctionIndex = newCueIndex(correctionCues)

var correctionCues = concat(
	cues(0.95, "no, I meant", "that's wrong", "that is wrong", "that's incorrect", "that is incorrect",
		"that's not right", "that is not right", "that's not correct", "that is not correct",
		"not what I asked", "not what I meant", "not what I wanted", "you misunderstood", "you misunderstand",
		"wrong answer", "you're wrong", "you are wrong",
		"c'est faux", "c'est incorrect", "ce n'est pas correct", "pas ce que j'ai demandé", "tu as mal compris",
		"vous avez mal compris", "mauvaise réponse",
		"eso está mal", "es incorrecto", "no es lo que pedí", "no es lo que quería", "no entendiste",
		"te equivocas", "respuesta incorrecta",
		"das ist falsch", "das ist nicht richtig", "nicht das, was ich", "du hast mich missverstanden",
		"falsche Antwort"),
	cues(0.9, "I meant", "that's not what", "that's not it", "this is wrong", "this is incorrect", "it's wrong",
		"it is wrong", "still wrong", "wrong again", "completely wrong", "totally wrong", "all wrong",
		"got it wrong", "is incorrect", "not correct", "incorrect answer", "answer is wrong", "you made a mistake",
		"you didn't understand", "you did not understand", "you didn't answer", "didn't answer my question",
		"doesn't answer my question", "does not answer my question", "you ignored",
		"je voulais dire", "ce n'est pas ce que", "quise decir", "me refería", "no es correcto", "ich meinte",
		"missverstanden"),
	cues(0.85, "try again", "do it again", "redo", "I said", "I already said", "I already told you", "I told you",
		"I asked for", "I asked you", "still doesn't work", "still does not work", "still not working",
		"still broken", "it doesn't work", "it didn't work", "that didn't work", "that doesn't work",
		"this doesn't work", "didn't work", "did not work", "falsch", "nicht richtig", "está mal",
		"réessaie", "réessayez", "recommence", "inténtalo de nuevo", "intenta de nuevo", "versuch es nochmal",
		"versuche es erneut", "nochmal versuchen"),
	// The fix did not work (audit c, 2026-11-27: "Still failing. Same error."). Bare "same
	// error" is left out: "Will the same error happen on staging?" asks something new; a
	// leading "Same error." counts through sameAtStart.
	cues(0.85, "still failing", "still fails", "still failed", "still crashing", "still crashes", "still erroring",
		"still isn't working", "still not fixed", "still getting the same", "still get the same", "still the same error",
		"still the same problem", "still the same issue", "getting the same error", "got the same error",
		"same error again", "same error as before", "same problem as before", "same issue as before",
		"ne marche toujours pas", "ne fonctionne toujours pas", "marche toujours pas", "fonctionne toujours pas",
		"toujours la même erreur", "toujours le même problème", "toujours le même bug", "encore la même erreur",
		"même erreur qu'avant", "plante toujours", "échoue toujours", "toujours cassé",
		"sigue fallando", "sigue sin funcionar", "sigue dando error", "sigue dando el mismo error",
		"otra vez el mismo error", "mismo error de antes", "todavía no funciona", "aún no funciona", "sigue roto",
		"funktioniert immer noch nicht", "geht immer noch nicht", "schlägt immer noch fehl", "stürzt immer noch ab",
		"immer noch der gleiche fehler", "immer noch derselbe fehler", "immer noch das gleiche problem",
		"immer noch dasselbe problem", "immer noch kaputt", "wieder derselbe fehler", "wieder der gleiche fehler"),
	// Fourth round (held-out 4, 2026-11-27; own wording in the tuning files): the user said
	// it already ("I just told you…"), the direction is reversed, nothing changed after a
	// fix, plain disbelief.
	cues(0.85, "I just told you", "I just said", "like I said", "as I said", "I literally said", "I literally just said",
		"je viens de te dire", "je viens de vous dire", "comme je l'ai dit", "je te l'ai dit", "je vous l'ai dit",
		"te acabo de decir", "le acabo de decir", "como te dije", "ya te lo dije", "ya te dije",
		"hab ich doch gesagt", "habe ich doch gesagt", "habe ich gerade gesagt", "hab ich gerade gesagt"),
	cues(0.85, "other way round", "other way around", "wrong way round", "wrong way around", "the wrong direction",
		"have it backwards", "have that backwards", "got that backwards", "it's backwards", "dans l'autre sens", "à l'envers", "al revés", "andersrum", "andersherum", "falsche Richtung"),
	// Not bare "still the same" ("Is the price still the same?"), "keine Änderung" ("keine
	// Änderung bei der Adresse") or "there's no way" ("There's no way I can make Monday").
	cues(0.8, "nothing changed", "nothing has changed", "made no difference", "it's still the same",
		"rien n'a changé", "toujours pareil", "ça n'a rien changé",
		"sigue igual", "no cambió nada", "no ha cambiado nada",
		"immer noch gleich", "hat sich nichts geändert", "hat nichts geändert",
		"there's no way that's", "there's no way it's", "there's no way this is", "no way that's right"),
	cues(0.75, "that didn't help", "that doesn't help", "not helpful", "unhelpful", "useless",
		"makes no sense", "doesn't make sense", "that's not", "ça ne marche pas", "ça ne fonctionne pas",
		"no funciona", "funktioniert nicht"),
	// Implausible values: "that can't be right" (docs/decisions/text.md §3.1). Bare forms
	// that also state the user's own problem ("Is it not possible to…", "impossible de me
	// connecter", "¿No puede ser más barato?") are left out.
	cues(0.85, "can't be right", "cannot be right", "can't be true", "cannot be true", "can't be correct",
		"that's impossible", "that is impossible", "that's not possible", "that is not possible",
		"ça ne peut pas être", "ce n'est pas possible", "c'est impossible", "ça me paraît impossible",
		"ça me semble impossible", "eso no puede ser", "no puede ser cierto", "no puede ser verdad",
		"eso es imposible", "eso no es posible", "das kann nicht stimmen", "kann nicht stimmen",
		"das kann nicht sein", "das ist unmöglich", "das ist nicht möglich", "kann unmöglich"),
	// Swapped fields: only the agent's doing ("I swapped the battery" is the user's).
	cues(0.85, "you swapped", "you've swapped", "you mixed up", "you've mixed up", "you got mixed up",
		"it's the other way round", "it's the other way around", "it is the other way round",
		"it is the other way around", "you switched", "got it backwards", "tu as inversé", "vous avez inversé",
		"as inversé", "tu as mélangé", "vous avez mélangé", "tu as confondu", "vous avez confondu",
		"c'est à l'envers", "has invertido", "invertiste", "has confundido", "confundiste", "está al revés",
		"lo has puesto al revés", "vertauscht", "verwechselt", "genau umgekehrt", "falsch herum",
		"durcheinandergebracht"),
	// Complaints (the second-round entries were added after the first held-out measurement,
	// docs/scoring.md §5.4). Forms that also ask a plain question ("How many times a day…",
	// "Combien de fois par jour…", "Vous n'avez rien en rouge ?", "Inutile de m'appeler") are
	// left out.
	cues(0.8, "stop telling me", "I've already done that", "I already did that", "I already tried",
		"already tried that", "you didn't fix", "you did not fix", "didn't fix anything", "ridiculous",
		"unacceptable", "waste of time", "are you even listening", "you don't even", "what a joke",
		"is the wrong", "that's the wrong", "you picked the wrong", "you sent the wrong", "not one of them",
		"not helping", "no help at all", "pointless", "nonsense", "rubbish", "terrible answer",
		"how many times do I have to", "how many times have I", "for the third time",
		"ne m'aide pas", "ne m'aides pas", "ne m'aidez pas", "inadmissible", "inacceptable",
		"arrête de me dire", "arrêtez de me dire", "je l'ai déjà fait", "j'ai déjà essayé",
		"tu n'as rien corrigé", "tu n'as rien fait", "vous n'avez rien corrigé", "vous n'avez rien fait",
		"n'en fait pas partie", "c'est nul", "ça ne sert à rien", "n'importe quoi", "c'est ridicule",
		"c'est inutile", "sont inutiles", "est inutile", "combien de fois faut-il", "combien de fois je dois",
		"lamentable",
		"vergüenza", "inaceptable", "deja de decirme", "ya lo revisé", "ya lo he hecho", "ya lo hice",
		"no has arreglado", "no sirve de nada", "no sirve para nada", "no sirven para nada", "esto no sirve",
		"no es uno de ellos", "una tomadura de pelo", "no me ayuda", "no me ayudas", "no me estás ayudando",
		"no me está ayudando", "qué desastre", "es un desastre", "ridículo", "es inútil", "son inútiles",
		"cuántas veces tengo que", "cuántas veces te lo", "absurdo",
		"Frechheit", "hör auf", "hören Sie auf", "das habe ich schon", "hab ich schon",
		"habe ich schon versucht", "habe ich schon gemacht", "nichts behoben", "gehört nicht dazu",
		"inakzeptabel", "unverschämt", "bringt nichts", "hilft mir nicht", "hilft mir überhaupt nicht",
		"hilft überhaupt nicht", "lächerlich", "nutzlos", "unbrauchbar", "Unsinn", "Quatsch", "wie oft noch",
		"Zumutung", "das stimmt nicht", "stimmt so nicht"),
	languageCues(),
)

// languageNames are the language names a "that's French" correction names, per language of the
// follow-up (docs/decisions/text.md §3).
var languageNames = struct{ en, fr, es, de []string }{
	en: []string{"English", "French", "Spanish", "German", "Italian", "Portuguese", "Dutch", "Japanese", "Chinese", "Korean", "Russian"},
	fr: []string{"anglais", "français", "espagnol", "allemand", "italien", "portugais", "néerlandais", "japonais", "chinois", "coréen", "russe"},
	es: []string{"inglés", "francés", "español", "alemán", "italiano", "portugués", "holandés", "japonés", "chino", "coreano", "ruso"},
	de: []string{"Englisch", "Französisch", "Spanisch", "Deutsch", "Italienisch", "Portugiesisch", "Niederländisch", "Japanisch", "Chinesisch", "Koreanisch", "Russisch"},
}

// languageCues are "that's <language>" statements about the answer: "That's French.", "This is in
// Spanish", "C'est de l'espagnol", "Eso es italiano", "Das ist Englisch" (confidence 0.85).
func languageCues() []cue {
	var ps []string
	for _, l := range languageNames.en {
		for _, d := range []string{"that's", "this is", "that is", "it's", "it is"} {
			ps = append(ps, d+" "+l, d+" in "+l)
		}
	}
	for _, l := range languageNames.fr {
		ps = append(ps, "c'est du "+l, "c'est de l'"+l, "c'est en "+l, "c'est de l "+l)
	}
	for _, l := range languageNames.es {
		ps = append(ps, "eso es "+l, "esto es "+l, "eso está en "+l, "esto está en "+l, "está en "+l)
	}
	for _, l := range languageNames.de {
		ps = append(ps, "das ist "+l, "das ist auf "+l, "das war "+l)
	}
	return cues(0.85, ps...)
}

// correctionStarts are cues that count only as the first word of the follow-up. negative marks plain
// negations, which are ignored when the previous assistant response asked a question.
var correctionStarts = []struct {
	word     string
	conf     float64
	negative bool
	// alone: the word counts only when punctuation or the end follows it in the raw text
	// ("Impossible, I had $3,000", not "Impossible to log in", "Impossible de me connecter";
	// "No, Lisbon.", not "¿No puede ser más barato?"), or, for no/non/nein, when a
	// statement of negationStatements follows ("no its 16").
	alone bool
}{
	{"wrong", 0.85, false, false}, {"incorrect", 0.85, false, false}, {"faux", 0.85, false, false},
	{"incorrecto", 0.85, false, false}, {"seriously", 0.75, false, false},
	{"impossible", 0.85, false, true}, {"imposible", 0.85, false, true}, {"unmoglich", 0.85, false, true},
	{"nope", 0.7, true, false}, {"no", 0.6, true, true}, {"nah", 0.6, true, false}, {"non", 0.6, true, true},
	{"nein", 0.6, true, true},
}

// negationStatements are the words that, right after a plain "no/non/nein" written without
// punctuation, open a statement of the right value ("no its 16", "non c'est ottawa", "nein es
// sind 16"), cueNorm'ed and padded. "nope" and "nah" need none: they never negate a verb
// the way "no" does in Spanish ("No puede ser más barato?"). Spanish "no es" is left out for
// that reason.
var negationStatements = map[string][]string{
	"no":   {" its ", " thats ", " it is ", " that is ", " it was ", " that was "},
	"non":  {" cest ", " ce nest ", " cetait "},
	"nein": {" es ist ", " es sind ", " das ist ", " das sind ", " es war ", " das war "},
}

// acceptancesAfterNo are what follows a leading negation that accepts the answer: "No,
// that's perfect, thanks!", "Nope, all good", "Non, c'est bon", "No, está perfecto", "Nein,
// passt so" (cueNorm'ed, matched at the start of the rest). A negation or a "but" within
// the next two words cancels it ("Nein, das passt nicht", "No, that's fine but…"). "good",
// "bueno", "bien", "gut" alone are left out ("No, good grief.").
var acceptancesAfterNo = padAll([]string{
	"thats perfect", "thats great", "thats fine", "thats good", "thats right", "thats correct", "thats ok",
	"thats okay", "thats it", "thats all", "thats everything", "thats awesome", "thats exactly it",
	"thats exactly right", "thats exactly what i needed", "thats exactly what i wanted",
	"that is perfect", "that is great", "that is fine", "that is good", "that is right", "that is correct",
	"that is all", "its fine", "its ok", "its okay", "its all good", "its perfect", "its good",
	"its great", "it is fine", "it is perfect", "all good", "all set", "all fine", "all done", "im good",
	"im all set", "were good", "that works", "that helps", "that will do", "thatll do", "everything is fine",
	"everythings fine", "perfect", "great", "fine", "ok", "okay", "alright", "all right", "cool",
	"parfait", "daccord", "nickel", "perfecto", "vale", "de acuerdo", "perfekt", "klasse", "prima",
	"cest parfait", "cest bon", "cest bien", "cest super", "cest tout", "cest ca", "cest correct",
	"cest exactement", "cest nickel", "cest pas grave", "ca ira", "ca va", "ca me va", "ca marche", "tout est bon",
	"tout va bien", "tout bon", "pas de souci", "pas de soucis", "pas de probleme", "pas grave",
	"esta perfecto", "esta bien", "todo bien", "todo perfecto", "todo correcto", "es perfecto", "es correcto",
	"asi esta bien", "eso es todo", "esta genial", "genial", "no hace falta", "nada mas",
	"passt", "passt so", "passt schon", "das passt", "alles gut", "alles klar", "alles bestens", "alles super",
	"alles prima", "das ist perfekt", "das ist gut", "das ist richtig", "das ist super", "ist gut", "schon gut",
	"das wars", "das reicht", "super",
})

// notAfterAcceptance cancel an acceptance after a negation when they are one of the next
// two words.
var notAfterAcceptance = map[string]bool{"not": true, "nicht": true, "pas": true, "no": true, "but": true,
	"mais": true, "pero": true, "aber": true, "though": true, "however": true, "nie": true, "kein": true,
	"didnt": true, "dont": true, "doesnt": true, "isnt": true, "wasnt": true}

func padAll(ps []string) []string {
	for i, p := range ps {
		ps[i] = " " + p + " "
	}
	return ps
}

// acceptedAfterNegation reports whether rest (the cueNorm'ed follow-up after its leading
// negation, padded) opens with an acceptance of the answer.
func acceptedAfterNegation(rest string) bool {
	match := ""
	for _, a := range acceptancesAfterNo {
		if strings.HasPrefix(rest, a) && len(a) > len(match) {
			match = a
		}
	}
	if match == "" {
		return false
	}
	a := len(match) - 1
	for range 2 {
		var w string
		if w, a = wordAfter(rest, a); notAfterAcceptance[w] {
			return false
		}
	}
	return true
}

// sameAtStart are the nouns that make a leading "same"/"même"/"mismo"/"gleicher" a complaint
// that the fix did not work ("Same error.", "Même erreur", "Mismo error", "Gleicher Fehler"),
// confidence 0.85. "Same question for Lyon" is not one.
var sameAtStart = map[string]map[string]bool{
	"same":     {"error": true, "problem": true, "issue": true, "result": true, "message": true, "bug": true, "crash": true},
	"meme":     {"erreur": true, "probleme": true, "bug": true, "resultat": true, "message": true},
	"mismo":    {"error": true, "problema": true, "fallo": true, "resultado": true, "mensaje": true},
	"gleicher": {"fehler": true},
	"derselbe": {"fehler": true},
	"gleiche":  {"problem": true, "fehlermeldung": true, "ergebnis": true},
	"dasselbe": {"problem": true, "ergebnis": true},
	"selber":   {"fehler": true},
	"selbe":    {"problem": true, "fehler": true},
	"dieselbe": {"fehlermeldung": true},
}

// stillLeads open a sentence that may say the problem is still there ("Still getting
// OOMKilled…", "Toujours « identifiants invalides ».", "Sigo viendo la pantalla negra.",
// "Immer noch Fehler 500."), cueNorm'ed: the first word, and the word after it when the
// lead has two ("immer noch"). Such a sentence is a complaint (confidence 0.85) only when it
// names a problem (stillSentence): "Still getting used to the layout", "Toujours partant
// pour samedi", "Sigo con el mismo plan" are not.
var stillLeads = map[string]string{
	"still": "", "toujours": "", "sigue": "", "siguen": "", "sigo": "", "todavia": "", "aun": "",
	"immer": "noch", "noch": "immer", "weiterhin": "",
}

// problemWords name what goes wrong (cueNorm'ed words): errors, failures, crashes, blank or
// black screens, refusals, timeouts. A status code 4xx/5xx or a quoted message counts too,
// and slowWords where they stand for the problem (stillSentence).
var problemWords = wordSet(`error errors erreur erreurs errores fehler fehlermeldung fail fails failed failing failure
echec echoue falla fallo fallos fallando fehlgeschlagen crash crashes crashed crashing plante plantage
stuck frozen freezes freezing bloque bloquee bloqueado bloqueada hangt haengt blank blanche blanco blanca leer
black noir noire negra negro schwarz invalid invalide invalides invalido invalida ungultig ungultige denied refuse
refusee denegado denegada verweigert declined rejected rechazado rechazada abgelehnt timeout timeouts broken
casse cassee roto rota kaputt oom oomkilled killed exception panic warning warnings avertissement warnung waiting
attends attente esperando warte warten problem problems probleme problemes problema problemas`)

// slowWords say that a thing is still slow (stillSentence); they name the problem only at
// the end of the sentence or before a comparison or a time ("still slow as ever",
// "Toujours aussi lent.", "still really slow after the restart"), not before what the user
// does or a noun ("Still slowly working through the course", "Still a slow week at work").
var (
	slowWords     = wordSet(`slow slowly lent lente lents lentes lento lenta lentos lentas langsam`)
	afterSlowWord = wordSet(`as than ever after since again comme que depuis apres como desde despues wie als seit nach`)
)

// absenceLeads open a "still no …" sentence: the thing asked for has not come ("Still no
// email.", "Toujours pas de réponse.", "Immer noch kein Empfang."). Politeness is not one
// ("still no rush", "still no need").
var (
	absenceLeads = []string{"still no", "toujours pas", "toujours aucun", "toujours aucune", "todavia no hay", "aun no hay",
		"sigue sin", "siguen sin", "sigo sin", "immer noch kein", "immer noch keine", "noch immer kein", "noch immer keine",
		"weiterhin kein", "weiterhin keine"}
	politeAfterNo = wordSet("rush need worries worry problem hurry pressure souci soucis probleme problemes problema prisa eile")
)

// thanksWords in a sentence make it a thank-you or praise, not a complaint or disbelief.
var thanksWords = wordSet(`thanks thank great perfect fantastic wonderful brilliant awesome excellent amazing incredible
love wow cool nice sweet yay better merci parfait super genial formidable incroyable chouette top mieux gracias
perfecto estupendo maravilla increible mejor danke perfekt prima toll wunderbar klasse unglaublich besser`)

// praises reports whether the cueNorm'ed text n holds one of thanksWords.
func praises(n string) bool {
	for _, w := range strings.Fields(n) {
		if _, ok := thanksWords[w]; ok {
			return true
		}
	}
	return false
}

// fixFailed returns the lead of the first sentence of followUp (cueNorm'ed: whole) that
// says the problem is still there (stillSentence) and is not a question; "" when none does.
func fixFailed(whole, followUp string) string {
	found := false
	for w := range stillLeads {
		if strings.Contains(whole, " "+w+" ") {
			found = true
			break
		}
	}
	if !found { // most follow-ups: no sentence to read
		return ""
	}
	s := capInput(followUp)
	for len(s) > 0 {
		end := strings.IndexFunc(s, isSentenceBreak)
		sentence, term := s, rune(0)
		if end >= 0 {
			sentence = s[:end]
			term, _ = utf8.DecodeRuneInString(s[end:])
		}
		if term != '?' && term != '¿' {
			if lead := stillSentence(sentence); lead != "" {
				return lead
			}
		}
		if end < 0 {
			break
		}
		_, size := utf8.DecodeRuneInString(s[end:])
		s = s[end+size:]
	}
	return ""
}

// stillSentence returns the lead of a sentence (without its end mark) that opens with one
// of stillLeads, not followed by a comma ("Still, …"), holds no thanks or praise, and
// either opens as an absence ("Still no email", absenceLeads, not "still no rush"), is at
// most three words long ("Still nothing.", "Toujours rien reçu."), or names a problem
// (problemWords, a status code, a quoted message); else "".
func stillSentence(sentence string) string {
	raw := strings.TrimLeft(sentence, " \t\r\n\"'«“(")
	n := cueNorm(raw)
	first, rest, _ := strings.Cut(n[1:], " ")
	second, ok := stillLeads[first]
	if !ok || rest == "" {
		return ""
	}
	if second != "" && !strings.HasPrefix(rest, second+" ") {
		return ""
	}
	if i := strings.IndexFunc(raw, func(r rune) bool { return !isAlnum(r) && !isMark(r) }); i >= 0 && raw[i] == ',' {
		return ""
	}
	if praises(n) {
		return ""
	}
	words := strings.Fields(n)
	lead := strings.TrimSpace(first + " " + second)
	for _, a := range absenceLeads {
		if strings.HasPrefix(n, " "+a+" ") {
			next, _, _ := strings.Cut(n[len(a)+2:], " ")
			if _, polite := politeAfterNo[next]; polite || next == "" {
				return "" // "Still no rush.", "Still no problem."
			}
			return a
		}
	}
	if len(words) <= 3 {
		return lead
	}
	if strings.ContainsAny(raw, "«»“”\"") {
		return lead
	}
	for i, w := range words {
		if _, bad := problemWords[w]; bad || len(w) == 3 && (w[0] == '4' || w[0] == '5') && allDigits(w) {
			return lead
		}
		if _, slow := slowWords[w]; slow && first != "sigo" { // "Sigo lento con…" is the user
			if i == len(words)-1 {
				return lead
			}
			if _, ok := afterSlowWord[words[i+1]]; ok {
				return lead
			}
		}
	}
	return ""
}

// successMarkers say that the answer worked ("Thanks, it worked", "Ça a marché", "Funcionó",
// "Hat geklappt"), cueNorm'ed and padded. A marker preceded (within two words) or followed
// (within two words) by a negation is not one ("I don't think it worked", "ça marche pas",
// "es funktioniert nicht", "no funcionó").
var successMarkers = newCueIndex(cues(1,
	"it worked", "that worked", "this worked", "it works now", "works now", "working now", "it works",
	"that did it", "that fixed it", "this fixed it", "fixed it", "did the trick", "problem solved", "all fixed",
	"ça a marché", "ça marche", "ça a fonctionné", "ça fonctionne", "c'est réglé", "problème réglé",
	"funcionó", "ya funciona", "ahora funciona", "ha funcionado", "ya está resuelto",
	"hat geklappt", "es klappt", "klappt jetzt", "hat funktioniert", "funktioniert jetzt", "es funktioniert",
	"geht jetzt"))

// successNegations cancel a success marker next to them.
var successNegations = map[string]bool{"no": true, "not": true, "dont": true, "didnt": true, "doesnt": true,
	"never": true, "pas": true, "jamais": true, "nunca": true, "nicht": true, "nie": true, "kein": true}

// reportingWords introduce what an app, a page or a message says ("the app says to try again
// later", "l'appli affiche « réessayez »", "la app dice «inténtalo de nuevo»", "die App meldet
// „Versuche es erneut“"), cueNorm'ed.
var reportingWords = newCueIndex(cues(1,
	"says", "said", "saying", "tells me", "told me", "telling me", "shows", "showing", "displays", "reads",
	"pops up", "asks me", "prompts",
	"dit", "affiche", "indique", "me demande de",
	"dice", "pone", "muestra", "aparece", "me pide",
	"sagt", "zeigt", "meldet", "steht", "fordert"))

// successAt is the offset in the padded cueNorm'ed text n of the first success marker that
// no negation touches, or -1.
func successAt(n string) int {
	at := -1
	successMarkers.each(n, func(i, pos int) bool {
		// the two words before the marker, then the two after it
		b, a := pos, pos+len(successMarkers.cues[i].norm)-1
		for range 2 {
			var w string
			if w, b = wordBefore(n, b); successNegations[w] {
				return true
			}
			if w, a = wordAfter(n, a); successNegations[w] {
				return true
			}
		}
		at = pos
		return false
	})
	return at
}

// wordBefore returns the word of the padded cueNorm'ed text n that ends at the space at
// offset sp, and the offset of the space before it ("" and sp at the start).
func wordBefore(n string, sp int) (string, int) {
	if sp <= 0 {
		return "", sp
	}
	i := strings.LastIndexByte(n[:sp], ' ')
	if i < 0 {
		return "", sp
	}
	return n[i+1 : sp], i
}

// wordAfter returns the word of n that starts after the space at offset sp, and the offset
// of the space after it ("" and sp at the end).
func wordAfter(n string, sp int) (string, int) {
	if sp+1 >= len(n) {
		return "", sp
	}
	j := strings.IndexByte(n[sp+1:], ' ')
	if j < 0 {
		return "", sp
	}
	return n[sp+1 : sp+1+j], sp + 1 + j
}

// withoutReportedSpeech is cueNorm(followUp) without what an app or a message is reported
// to say after the user said that the answer worked: from a reporting word (reportingWords)
// to the end of its sentence (. ! ? ; … or a line break), in the sentence of the success
// marker (after the marker) and the sentences after it. "Thanks, it worked. The app says to
// try again later though" keeps "thanks it worked the app"; "It crashed and the log says to
// retry. Try again please." has no success marker and is left whole.
func withoutReportedSpeech(followUp string) string {
	s := capInput(followUp)
	// The sentences, normalised one after another into one padded text; ends[k] is the
	// offset of the space that closes sentence k.
	b := make([]byte, 1, len(s)+2)
	b[0] = ' '
	var endsBuf [16]int
	ends := endsBuf[:0]
	for len(s) > 0 {
		i := strings.IndexFunc(s, isSentenceBreak)
		sent := s
		if i >= 0 {
			_, size := utf8.DecodeRuneInString(s[i:])
			sent, s = s[:i], s[i+size:]
		} else {
			s = ""
		}
		b = appendCueNorm(b, sent)
		if b[len(b)-1] != ' ' {
			b = append(b, ' ')
		}
		if len(ends) == 0 || ends[len(ends)-1] != len(b)-1 {
			ends = append(ends, len(b)-1)
		}
	}
	n := string(b)
	out := b[:1]
	seen, start := false, 0
	for _, end := range ends {
		sent := n[start : end+1] // padded: " words of the sentence "
		from := 0
		if !seen {
			if m := successAt(sent); m >= 0 {
				seen, from = true, m
			}
		}
		if seen {
			reportingWords.each(sent[from:], func(_, pos int) bool {
				sent = sent[:from+pos+1]
				return false
			})
		}
		out = append(out, sent[1:]...) // out ends with a space; so does sent
		start = end
	}
	return string(out)
}

// isSentenceBreak: the ends of a sentence for withoutReportedSpeech.
func isSentenceBreak(r rune) bool {
	switch r {
	case '.', '!', '?', ';', '…', '\n', '¡', '¿':
		return true
	}
	return false
}

// notCorrectionAfterNo are second words that make a leading "no" polite ("no thanks", "no problem").
var notCorrectionAfterNo = map[string]bool{
	"thanks": true, "thank": true, "problem": true, "problemo": true, "worries": true, "worry": true,
	"need": true, "rush": true, "hurry": true, "idea": true, "merci": true, "gracias": true, "danke": true,
}

// restatement leads and negations for "I asked for X, not Y" (same language pairs only).
var restatements = padRestatements([]struct{ leads, negs []string }{
	{leads: []string{"i asked", "i wanted", "i want", "i said", "i meant", "i need", "i needed", "i requested"},
		negs: []string{"not"}},
	{leads: []string{"jai demande", "je voulais", "je veux"}, negs: []string{"pas"}},
	{leads: []string{"pedi", "queria", "quiero", "dije"}, negs: []string{"no"}},
	{leads: []string{"ich wollte", "ich will", "ich meinte", "ich habe nach"}, negs: []string{"nicht", "kein", "keine"}},
})

// padRestatements pads each lead and negation with a space at each end, as they are
// matched in cueNorm'ed text (done once, not per follow-up).
func padRestatements(rs []struct{ leads, negs []string }) []struct{ leads, negs []string } {
	for _, r := range rs {
		for i, l := range r.leads {
			r.leads[i] = " " + l + " "
		}
		for i, n := range r.negs {
			r.negs[i] = " " + n + " "
		}
	}
	return rs
}

// Correction reports whether a follow-up user message corrects or complains about the previous answer (RDM):
// "no, I meant…", "that's wrong", "try again", "not what I asked", "I asked for X, not Y", "incorrect", "you misunderstood", etc.,
// in en (+ a few fr/es/de phrases). Returns confidence in [0,1] and the matched cue. A plain "no" answering a yes/no question
// asked by the assistant must not be a correction: the caller passes the previous assistant response as prev.
//
// Rules (docs/decisions/text.md §3), on cueNorm'ed text: the result is the matching cue of highest
// confidence (first listed on ties) among (1) correctionCues anywhere, (2) a restatement "I asked for X, not
// Y": a lead ("i asked", "i wanted", "i said", "i meant"...) followed later by its language's negation,
// confidence 0.95, cue "I asked for X, not Y", (3) correctionStarts as the first word, and a leading
// "same error/problem…" (sameAtStart, 0.85); the plain negations (no, nope, nah, non, nein) are skipped
// when prev asks a question (askedQuestion), when followed by a polite word ("no thanks", "no problem") or
// by an acceptance ("No, that's perfect", acceptancesAfterNo); no/non/nein count without punctuation only
// before a statement ("no its 16", negationStatements). "I meant to ask" is the user's own question,
// neither (1) nor (2). When the follow-up says the answer worked ("it worked", successMarkers), (1) and
// (2) do not read what an app or message is reported to say after it ("the app says to try again later",
// withoutReportedSpeech) (docs/decisions/text.md §3.4). (4) A sentence that opens with "still",
// "toujours", "sigo", "immer noch"… and names a problem, an absence or is at most three words
// ("Still getting the 502.", "Still no email.", "Toujours rien reçu."; stillSentence, 0.85), not
// after "it worked" (docs/decisions/text.md §3.6). (5) "You made that up" and its kin beside
// a denial that the thing exists, and "you put the month where…" not in a question
// (madeUpOrMisplaced, 0.85; §3.7). ok is false, confidence 0 and cue "" when nothing matches.
func Correction(followUp, prev string) (ok bool, confidence float64, cue string) {
	whole := cueNorm(followUp)
	if len(whole) <= 2 {
		return false, 0, ""
	}
	confidence, cue = correctionAnywhere(whole)
	// Only a text with a cue pays for the success marker and the sentence pass.
	if confidence > 0 {
		if m := successAt(whole); m >= 0 && hasReportingWord(whole[m:]) {
			confidence, cue = correctionAnywhere(withoutReportedSpeech(followUp))
		}
	}
	first, rest, _ := strings.Cut(whole[1:], " ")
	second, _, _ := strings.Cut(rest, " ")
	if nouns := sameAtStart[first]; nouns[second] && confidence < 0.85 {
		confidence, cue = 0.85, first+" "+second
	}
	if confidence < 0.85 {
		if lead := fixFailed(whole, followUp); lead != "" && successAt(whole) < 0 {
			confidence, cue = 0.85, lead
		}
	}
	if confidence < 0.85 {
		if c := madeUpOrMisplaced(whole, followUp); c != "" {
			confidence, cue = 0.85, c
		}
	}
	for _, s := range correctionStarts {
		if s.conf <= confidence || first != s.word {
			continue
		}
		if s.negative && (askedQuestion(prev) || notCorrectionAfterNo[second] || acceptedAfterNegation(" "+rest)) {
			continue
		}
		if s.alone && !firstWordAlone(followUp) && !statesAfterNegation(s.word, " "+rest, followUp) {
			continue
		}
		confidence, cue = s.conf, s.word
	}
	return confidence > 0, confidence, cue
}

// correctionAnywhere is the best of the phrases anywhere (correctionCues) and the
// restatement "I asked for X, not Y" in the cueNorm'ed text n, as Correction describes.
func correctionAnywhere(n string) (confidence float64, cue string) {
	best := -1
	apology := hasLead(withoutFillers(n), apologyLeads)
	correctionIndex.each(n, func(i, pos int) bool {
		c := correctionCues[i]
		if ownRequest(n, c.norm, pos, apology) {
			return true
		}
		// highest confidence; on ties the first listed
		if c.conf > confidence || c.conf == confidence && i < best {
			confidence, cue, best = c.conf, c.phrase, i
		}
		return true
	})
	if confidence >= 0.95 {
		return confidence, cue
	}
	lastFirst, f := "", -1
	for _, r := range restatements {
		for _, l := range r.leads {
			// A lead's first occurrence is at or after its first word's ("i", "je",
			// "ich"...): the first word is searched once for the leads listed after
			// one another that share it, and they are not searched when it is absent.
			if first := l[:strings.IndexByte(l[1:], ' ')+2]; first != lastFirst {
				lastFirst, f = first, strings.Index(n, first)
			}
			if f < 0 {
				continue
			}
			i := strings.Index(n[f:], l)
			if i < 0 {
				continue
			}
			i += f
			if ownRequest(n, l, i, apology) {
				continue
			}
			rest := n[i+len(l)-1:]
			for _, neg := range r.negs {
				if strings.Contains(rest, neg) {
					return 0.95, "I asked for X, not Y"
				}
			}
		}
	}
	return confidence, cue
}

// hasReportingWord reports whether the padded cueNorm'ed text n holds one of reportingWords.
func hasReportingWord(n string) bool {
	found := false
	reportingWords.each(n, func(int, int) bool {
		found = true
		return false
	})
	return found
}

// meantCues are the "I meant" cues per language (cueNorm'ed, padded), and apologyLeads the
// first words of a follow-up that apologises: after one, "I meant" corrects the user's own
// request ("Oops, I meant 520 GBP"; "Désolé, je voulais dire l'Australie"), not the answer.
var (
	meantCues = []string{
		meantCue, " je voulais dire ", " quise decir ", " queria decir ", " me referia ", " ich meinte ",
		" ich wollte sagen ",
	}
	apologies = []string{
		"sorry", "oops", "oups", "whoops", "my bad", "my mistake", "desole", "desolee", "pardon", "ma faute",
		"perdon", "perdona", "perdone", "disculpa", "disculpe", "lo siento", "ups", "mi error", "me equivoque",
		"entschuldigung", "entschuldige", "verzeihung", "mein fehler",
	}
	apologyLeads = newLeadSet(apologies)
)

// ownRequest reports whether the cue (padded, cueNorm'ed) found at pos of n corrects the
// user's own request, not the answer: "I meant to ask about Austin" (their question), or
// an "I meant" (meantCues, read as text at pos, so the restatement lead "quería" of
// "quería decir" counts) after an apology ("Sorry, I meant Australia": their slip;
// apology is hasLead(withoutFillers(n), apologyLeads), so "Oh sorry, …" counts).
func ownRequest(n, cue string, pos int, apology bool) bool {
	if cue == meantCue && strings.HasPrefix(n[pos:], meantToAsk) {
		return true
	}
	if apology {
		for _, m := range meantCues {
			if strings.HasPrefix(n[pos:], m) {
				return true
			}
		}
	}
	return false
}

// meantCue and meantToAsk: "I meant" is a correction, "I meant to ask about Austin" is the
// user correcting their own question (the answer was right for what was asked).
const (
	meantCue   = " i meant "
	meantToAsk = " i meant to ask "
)

// statesAfterNegation reports whether a leading negation written without punctuation opens
// a statement of the right value ("nope its canberra", "no its 16", "non c'est ottawa", "nein
// es sind 16"): the word is followed by one of negationStatements, and the first clause of
// the raw follow-up is not a question.
func statesAfterNegation(word, rest, followUp string) bool {
	ok := false
	for _, st := range negationStatements[word] {
		if strings.HasPrefix(rest, st) {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	if i := strings.IndexAny(followUp, ",.;!?"); i >= 0 && followUp[i] == '?' {
		return false
	}
	return true
}

// firstWordAlone reports whether the first word of s (after leading blanks and opening
// punctuation) is followed by punctuation or by the end of s.
func firstWordAlone(s string) bool {
	s = strings.TrimLeft(capInput(s), " \t\r\n¡¿\"'«“(")
	i := strings.IndexFunc(s, func(r rune) bool { return !isAlnum(r) && !isMark(r) })
	if i < 0 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return strings.ContainsRune(",.!;:…?", r)
}

// askedQuestion reports whether the assistant response prev asks the user something: its last 300 bytes
// (after trimming trailing white space) contain '?', '？' or '¿'.
func askedQuestion(prev string) bool {
	prev = strings.TrimRight(prev, " \t\r\n")
	if len(prev) > 300 {
		i := len(prev) - 300
		for i < len(prev) && !utf8.RuneStart(prev[i]) {
			i++
		}
		prev = prev[i:]
	}
	return strings.ContainsAny(prev, "?？¿")
}

// refusalCues are matched anywhere in the text (docs/decisions/text.md §4).
var refusalCues = cues(1,
	"I can't help with", "I cannot help with", "I can not help with", "I can't help you with",
	"I cannot help you with", "I can't assist", "I cannot assist", "I'm unable to", "I am unable to",
	"I'm not able to", "I am not able to", "as an AI", "as a language model", "I can't provide", "I cannot provide",
	"I can't do that", "I cannot do that", "I won't be able to", "I will not be able to", "I must decline",
	"I have to decline", "I'm not allowed to", "I am not allowed to", "I'm not permitted to", "I can't comply",
	"I cannot comply", "I can't fulfill", "I cannot fulfill", "I can't answer", "I cannot answer",
	"I'm afraid I can't", "unable to help with", "not able to help with", "I can't share", "I cannot share",
	"I won't help", "I will not help",
	"je ne peux pas vous aider", "je ne peux pas t'aider", "je ne peux pas répondre", "je ne suis pas en mesure",
	"en tant qu'IA", "en tant qu'intelligence artificielle",
	"no puedo ayudarte", "no puedo ayudarle", "no puedo ayudar", "no puedo responder", "no puedo proporcionar",
	"como IA", "como inteligencia artificial", "no estoy en condiciones de",
	"ich kann Ihnen nicht helfen", "ich kann dir nicht helfen", "ich kann dabei nicht helfen",
	"ich kann Ihnen dabei nicht helfen", "ich kann dir dabei nicht helfen",
	"ich kann nicht helfen", "als KI", "ich bin nicht in der Lage",
)

// Refusal reports whether s is a refusal ("I can't help with that", "I'm unable to", "as an AI"...): whether the
// cueNorm'ed text contains one of refusalCues on word boundaries.
func Refusal(s string) bool {
	found := false
	refusalIndex.each(cueNorm(s), func(int, int) bool {
		found = true
		return false
	})
	return found
}

var refusalIndex = newCueIndex(refusalCues)

// uncertaintyCues and resolutionCues (docs/decisions/text.md §4).
var (
	uncertaintyCues = cues(1,
		"not sure", "unsure", "not certain", "uncertain", "maybe", "might be", "may be", "perhaps", "possibly",
		"I don't know", "don't know", "do not know", "no idea", "unclear", "not clear", "I guess", "hard to say",
		"can't tell", "cannot tell", "can't determine", "cannot determine", "unable to determine", "could be",
		"not confident",
		"pas sûr", "pas certain", "peut-être", "je ne sais pas", "incertain", "pas clair",
		"no estoy seguro", "no estoy segura", "quizás", "quizá", "tal vez", "no lo sé", "no está claro",
		"nicht sicher", "vielleicht", "weiß nicht", "unklar", "keine Ahnung", "möglicherweise")
	resolutionCues = cues(1,
		"let me check", "let me verify", "let me look", "let me find", "let me confirm", "I'll check",
		"I will check", "I'll verify", "I will verify", "I'll look", "I will look", "I'll confirm", "I will confirm",
		"to confirm", "to verify", "to check", "to find out", "confirmed", "verified", "I found", "turns out",
		"after checking", "ask the user", "ask for clarification", "to clarify",
		"je vais vérifier", "vérifions", "pour vérifier", "confirmé",
		"voy a verificar", "voy a comprobar", "déjame verificar", "para verificar", "confirmado",
		"ich prüfe", "ich überprüfe", "lass mich prüfen", "bestätigt")
)

// Uncertainty reports unresolved uncertainty cues ("not sure", "maybe", "I don't know", "might be", "unclear").
//
// An uncertainty cue is unresolved when no resolution cue ("let me check", "I'll verify", "to confirm",
// "confirmed", "ask the user"...) starts after the start of the last uncertainty cue in s: "Not sure which
// tool fits; let me check the docs" is resolved, "Let me check. Maybe it is X" is not.
func Uncertainty(s string) bool {
	n := cueNorm(s)
	lastU, lastR := -1, -1
	uncertaintyIndex.each(n, func(_, pos int) bool {
		lastU = pos
		return true
	})
	if lastU < 0 {
		return false
	}
	resolutionIndex.each(n[lastU+1:], func(_, pos int) bool {
		lastR = pos
		return false
	})
	return lastR < 0
}

var (
	uncertaintyIndex = newCueIndex(uncertaintyCues)
	resolutionIndex  = newCueIndex(resolutionCues)
)

// madeUpCues say that the agent made the thing up ("you just made that up", "tu l'as
// inventé", "te lo has inventado", "hast du dir das ausgedacht"); they count only beside a
// denial that it exists (saysAbsent): "So you invented Ember just now? My son loved her!"
// praises a story (docs/decisions/text.md §3.7).
var madeUpCues = newCueIndex(cues(0.85,
	"you made that up", "you made this up", "you made it up", "you just made that up", "you just made it up",
	"did you make that up", "did you make this up", "you're making this up", "you're making that up",
	"you're making things up", "you are making this up", "stop making things up", "stop inventing", "you invented",
	"tu l'as inventé", "vous l'avez inventé", "tu as inventé", "vous avez inventé", "c'est inventé", "tu l'inventes",
	"te lo has inventado", "te lo inventaste", "te lo estás inventando", "lo has inventado", "te has inventado",
	"hast du dir das ausgedacht", "hast du dir ausgedacht", "hast du das erfunden", "hast du erfunden",
	"frei erfunden", "das ist erfunden"))

// misplacedCues say where the agent put a field ("You put the month where the day should
// be", "Has puesto el mes donde va el día"): a swap, unless asked ("And you put the month
// where?").
var misplacedCues = newCueIndex(cues(0.85,
	"you put the month where", "you put the day where", "you put the year where", "you've put the month where",
	"you've put the day where", "you put the first name where", "you put the last name where",
	"as mis le mois à la place", "as mis le jour à la place", "avez mis le mois à la place", "avez mis le jour à la place",
	"has puesto el mes donde", "has puesto el día donde", "has puesto el año donde", "pusiste el mes donde",
	"pusiste el día donde", "has cambiado el día por el mes", "has cambiado el mes por el día",
	"hast den Monat an die Stelle", "hast den Tag an die Stelle"))

// madeUpOrMisplaced returns the first of madeUpCues (beside a denial, saysAbsent) or
// misplacedCues (not in a question) that the cueNorm'ed follow-up n holds (raw followUp),
// as cueNorm'ed words; "" when none.
func madeUpOrMisplaced(n, followUp string) string {
	if c := firstCue(madeUpCues, n); c != "" && saysAbsent(n) {
		return c
	}
	if strings.ContainsAny(followUp, "?？¿") {
		return ""
	}
	return firstCue(misplacedCues, n)
}

// firstCue returns the first cue of x in the cueNorm'ed text n, as cueNorm'ed words; "" when
// none.
func firstCue(x *cueIndex, n string) string {
	found := ""
	x.each(n, func(i, _ int) bool {
		found = strings.TrimSpace(x.cues[i].norm)
		return false
	})
	return found
}
