// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package text // import "github.com/agenteval/agenteval-collector/internal/text"

import "strings"

// Stop-word lists, already lower-cased and accent-folded (see fold). The en/fr/es/de lists are the
// Snowball project's stop lists (snowballstem.org/algorithms/{english,french,spanish,german}/stop.txt,
// BSD licence) with these changes, documented in docs/decisions/text.md:
//   - English contractions are given as the fragments our tokeniser produces (it splits on apostrophes:
//     "don't" -> "don" + "t"), e.g. don, doesn, isn, ll, ve, re;
//   - words that are common content words in another of the four languages are removed:
//     "ai" (fr "j'ai", but "AI" in English), "eu" (fr, but "EU"), "bin", "hat", "war" (de),
//     "estado(s)/estada(s)" (es "been", but "estado del pedido" = order status).
const (
	stopEN = `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these those am is
are was were be been being have has had having do does did doing would should could ought a an the and but if
or because as until while of at by for with about against between into through during before after above
below to from up down in out on off over under again further then once here there when where why how all any
both each few more most other some such no nor not only own same so than too very
isn aren wasn weren hasn haven hadn doesn don didn won wouldn shan shouldn can cannot couldn mustn let ll ve re`

	stopFR = `au aux avec ce ces dans de des du elle en et eux il je la le leur lui ma mais me meme mes moi mon ne
nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vos votre vous c d j
l a m n s t y ete etee etees etes etant suis es est sommes sont serai seras sera serons serez seront serais
serait serions seriez seraient etais etait etions etiez etaient fus fut fumes futes furent sois soit soyons
soyez soient fusse fusses fussions fussiez fussent ayant eue eues eus as avons avez ont aurai auras aura
aurons aurez auront aurais aurait aurions auriez auraient avais avait avions aviez avaient eut eumes eutes
eurent aie aies ait ayons ayez aient eusse eusses eussions eussiez eussent ceci cela cet cette ici ils les
leurs quel quels quelle quelles sans soi`

	stopES = `de la que el en y a los del se las por un para con no una su al lo como mas pero sus le ya o este si
porque esta entre cuando muy sin sobre tambien me hasta hay donde quien desde todo nos durante todos uno les
ni contra otros ese eso ante ellos e esto mi antes algunos que unos yo otro otras otra el tanto esa estos
mucho quienes nada muchos cual poco ella estar estas algunas algo nosotros mis tu te ti tus ellas nosotras
vosotros vosotras os mio mia mios mias tuyo tuya tuyos tuyas suyo suya suyos suyas nuestro nuestra nuestros
nuestras vuestro vuestra vuestros vuestras esos esas estoy estas esta estamos estais estan este estes
estemos esteis esten estare estaras estara estaremos estareis estaran estaria estarias estariamos
estariais estarian estaba estabas estabamos estabais estaban estuve estuviste estuvo estuvimos estuvisteis
estuvieron estuviera estuvieras estuvieramos estuvierais estuvieran estuviese estuvieses estuviesemos
estuvieseis estuviesen estando estad he has ha hemos habeis han haya hayas hayamos hayais hayan habre habras
habra habremos habreis habran habria habrias habriamos habriais habrian habia habias habiamos habiais habian
hube hubiste hubo hubimos hubisteis hubieron hubiera hubieras hubieramos hubierais hubieran hubiese hubieses
hubiesemos hubieseis hubiesen habiendo habido habida habidos habidas soy eres es somos sois son sea seas
seamos seais sean sere seras sera seremos sereis seran seria serias seriamos seriais serian era eras eramos
erais eran fui fuiste fue fuimos fuisteis fueron fuera fueras fueramos fuerais fueran fuese fueses fuesemos
fueseis fuesen siendo sido tengo tienes tiene tenemos teneis tienen tenga tengas tengamos tengais tengan
tendre tendras tendra tendremos tendreis tendran tendria tendrias tendriamos tendriais tendrian tenia tenias
teniamos teniais tenian tuve tuviste tuvo tuvimos tuvisteis tuvieron tuviera tuvieras tuvieramos tuvierais
tuvieran tuviese tuvieses tuviesemos tuvieseis tuviesen teniendo tenido tenida tenidos tenidas tened`

	stopDE = `aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anderm
andern anderr anders auch auf aus bei bis bist da damit dann der den des dem die das dass derselbe derselben
denselben desselben demselben dieselbe dieselben dasselbe dazu dein deine deinem deinen deiner deines denn
derer dessen dich dir du dies diese diesem diesen dieser dieses doch dort durch ein eine einem einen einer
eines einig einige einigem einigen einiger einiges einmal er ihn ihm es etwas euer eure eurem euren eurer
eures fur gegen gewesen hab habe haben hatte hatten hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer
ihres euch im in indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine
keinem keinen keiner keines konnen konnte machen man manche manchem manchen mancher manches mein meine meinem
meinen meiner meines mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine seinem
seinen seiner seines selbst sich sie ihnen sind so solche solchem solchen solcher solches soll sollte sondern
sonst uber um und uns unsere unserem unseren unser unseres unter viel vom von vor wahrend waren warst was weg
weil weiter welche welchem welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen
wollte wurde wurden zu zum zur zwar zwischen`
)

// framing lists the words that frame a request rather than state it ("can you show me how to ...",
// "pouvez-vous me montrer", "puedes mostrarme", "kannst du mir zeigen"): politeness, modal and request
// verbs, greetings and question words not already in the stop lists. They are matched after stemming
// (framingStems holds stem(w) for each), so "showing", "shows" and "showed" are dropped like "show".
const framing = `please pls plz kindly could would will shall may might must show tell give explain help want
wanna need like know get see thank thanks hi hello hey ok okay yes yeah sure just also really actually still
anyway way something anything everything thing things someone somebody
comment pourquoi quand combien quoi peux peut pouvez pourriez pourrais veux voudrais montrer montrez dire dites
expliquer expliquez aider aidez faire fais svp stp merci bonjour salut
puedes puede podrias podria pueden quiero quisiera necesito mostrar mostrarme muestrame decir dime decirme
explicar explicame ayuda ayudar ayudame favor gracias hola hacer haz cuanto cuanta cuantos cuantas
bitte kannst konntest konnten zeig zeige zeigen sag sage sagen erklar erklare erklaren helfen hilf mochte
brauche danke hallo warum wieso weshalb`

var (
	stopSet      = wordSet(stopEN, stopFR, stopES, stopDE)
	framingSet   = wordSet(framing)
	framingStems = stemSet(framing)
)

func wordSet(lists ...string) map[string]struct{} {
	m := make(map[string]struct{}, 1024)
	for _, l := range lists {
		for _, w := range strings.Fields(l) {
			m[w] = struct{}{}
		}
	}
	return m
}

func stemSet(list string) map[string]struct{} {
	m := make(map[string]struct{}, 256)
	for _, w := range strings.Fields(list) {
		m[string(stem([]byte(w)))] = struct{}{}
	}
	return m
}

// stopTable and framingTable hold stopSet and framingStems for the tokeniser's lookups
// (wordTable: no map hashing per word).
var (
	stopTable    = newWordTable(stopSet)
	framingTable = newWordTable(framingStems)
)

// isStop reports whether the folded word w is a stop word of any of the four languages.
func isStop(w []byte) bool { return stopTable.has(w) }

// isFramingStem reports whether the stem st is the stem of a framing word.
func isFramingStem(st []byte) bool { return framingTable.has(st) }

// wordTable is a read-only set of words for lookups by byte slice: open addressing with
// linear probing on the FNV-1a 64 hash, each slot holding the word and its hash. It answers
// exactly like the map it is built from (a hit compares the bytes).
type wordTable struct {
	mask  uint64
	slots []wordSlot
}

type wordSlot struct {
	h uint64
	w string // "" for an empty slot
}

func newWordTable(words map[string]struct{}) *wordTable {
	n := 1
	for n < 4*len(words) {
		n <<= 1
	}
	t := &wordTable{mask: uint64(n - 1), slots: make([]wordSlot, n)}
	for w := range words {
		if w == "" {
			continue
		}
		h := fnv(w)
		i := h & t.mask
		for t.slots[i].w != "" {
			i = (i + 1) & t.mask
		}
		t.slots[i] = wordSlot{h: h, w: w}
	}
	return t
}

func (t *wordTable) has(w []byte) bool {
	h := fnv(w)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.w == "" {
			return false
		}
		if s.h == h && s.w == string(w) {
			return true
		}
	}
}
