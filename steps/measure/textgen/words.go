package textgen

// The word lists the grammar draws from. Everything is plain ASCII with no apostrophes or
// hyphens, so every word is a run of letters: that keeps the prose predictable for the
// token-budget code that slices it. Nouns are "singular" or "singular/plural"; verbs are
// "base" or "base/past/participle" when irregular (regular forms are derived by inflect.go).

// topic is the vocabulary of one subject a paragraph is about.
type topic struct {
	name     string
	nouns    string // concrete things of the subject
	agents   string // people who act in the subject
	adjs     string // adjectives that fit its nouns
	verbs    string // transitive actions its agents perform
	abstract string // mass nouns: qualities and ideas ("the reliability of ...")
	places   string // where things happen ("in the harbor")
}

var topicTable = []topic{
	{
		name:     "engineering",
		nouns:    "bridge turbine valve pipeline gearbox bearing pump boiler crane tunnel railway dam generator beam girder prototype sensor circuit engine compressor furnace",
		agents:   "engineer surveyor mechanic inspector technician contractor designer welder foreman",
		adjs:     "rigid reliable heavy compact efficient durable hydraulic electrical brittle massive modern faulty redundant",
		verbs:    "design repair inspect test assemble calibrate replace reinforce measure weld install maintain",
		abstract: "reliability tolerance pressure friction fatigue efficiency stress vibration load safety",
		places:   "workshop factory foundry yard depot harbor plant site",
	},
	{
		name:     "physics",
		nouns:    "particle crystal magnet laser detector spectrum/spectra sample lens electron atom wave field beam pendulum prism mirror chamber",
		agents:   "physicist researcher student chemist professor observer experimenter assistant",
		adjs:     "stable charged frozen dense transparent radioactive faint precise unexpected theoretical thermal optical",
		verbs:    "observe measure isolate heat cool record predict analyze detect separate",
		abstract: "energy momentum entropy symmetry temperature density radiation gravity uncertainty resonance",
		places:   "laboratory observatory basement clean room university institute",
	},
	{
		name:     "history",
		nouns:    "treaty kingdom army charter manuscript monastery fortress colony empire province council parliament harbor castle market village dynasty",
		agents:   "historian king queen merchant soldier bishop governor ambassador chronicler scribe general",
		adjs:     "ancient medieval royal rival coastal fragile forgotten powerful prosperous rebellious distant loyal",
		verbs:    "sign defend conquer govern abandon negotiate record restore tax found/founded/founded rebuild/rebuilt/rebuilt",
		abstract: "authority trade loyalty power famine unrest prosperity tradition diplomacy succession",
		places:   "capital valley frontier court archive city countryside",
	},
	{
		name:     "nature",
		nouns:    "forest river meadow wetland glacier species/species seed root insect bird fox wolf/wolves oak mushroom coral reef island",
		agents:   "ecologist biologist ranger botanist farmer naturalist volunteer warden",
		adjs:     "native fragile seasonal dense wild shallow rare abundant migratory invasive quiet fertile",
		verbs:    "protect survey count plant monitor track restore study collect photograph",
		abstract: "biodiversity rainfall drought erosion habitat pollination decay growth competition shelter",
		places:   "valley marsh highlands estuary reserve woodland delta",
	},
	{
		name:     "economics",
		nouns:    "market price wage loan bank contract budget tariff currency bond factory supplier warehouse invoice forecast index",
		agents:   "economist banker investor trader regulator minister accountant analyst entrepreneur",
		adjs:     "volatile stable rising falling global regional modest cautious profitable competitive uncertain generous",
		verbs:    "finance regulate forecast trade lend/lent/lent borrow invest audit tax price",
		abstract: "inflation demand supply growth productivity credit risk liquidity confidence competition",
		places:   "capital port exchange region province city",
	},
	{
		name:     "medicine",
		nouns:    "patient clinic vaccine dose symptom fever infection ward hospital trial therapy scan tissue wound",
		agents:   "doctor nurse surgeon pharmacist researcher physician midwife therapist",
		adjs:     "chronic acute mild severe routine experimental effective sterile rare careful gentle preventive",
		verbs:    "treat diagnose examine prescribe monitor vaccinate sedate discharge study test",
		abstract: "immunity recovery hygiene nutrition fatigue pain circulation resistance health sleep",
		places:   "ward clinic hospital village surgery pharmacy",
	},
	{
		name:     "music",
		nouns:    "symphony melody rhythm orchestra violin piano choir concert score chord rehearsal opera song quartet",
		agents:   "composer conductor pianist violinist singer critic student teacher drummer",
		adjs:     "gentle lively solemn familiar dramatic quiet bright complex elegant playful haunting modern",
		verbs:    "compose perform rehearse arrange conduct record revise publish practice",
		abstract: "harmony tempo silence tension balance texture emotion style dynamics timing",
		places:   "hall theater conservatory church studio festival",
	},
	{
		name:     "astronomy",
		nouns:    "planet comet telescope moon star galaxy orbit eclipse nebula satellite asteroid meteor horizon",
		agents:   "astronomer navigator observer mathematician student pilot cartographer",
		adjs:     "distant faint bright elliptical rocky icy massive brief ancient remote steady luminous",
		verbs:    "observe chart track photograph predict measure catalog calculate discover name",
		abstract: "gravity brightness distance motion darkness light time velocity mass rotation",
		places:   "observatory desert mountain coast island plateau",
	},
	{
		name:     "agriculture",
		nouns:    "harvest field orchard barn tractor sheaf/sheaves plough canal hedge seedling greenhouse vineyard herd fence silo",
		agents:   "farmer grower shepherd agronomist laborer landowner beekeeper miller",
		adjs:     "fertile dry early late abundant terraced organic seasonal modest rich rocky sheltered",
		verbs:    "plant harvest irrigate plough prune repair store sell sow/sowed/sown grow/grew/grown",
		abstract: "yield rainfall drainage frost fertility labor shade moisture rotation weather",
		places:   "valley farm hillside plain village county estate",
	},
	{
		name:     "computing",
		nouns:    "server compiler database network cache processor algorithm protocol kernel scheduler cluster benchmark query index",
		agents:   "programmer operator administrator analyst engineer tester architect maintainer",
		adjs:     "parallel distributed slow fast robust concurrent scalable idle busy secure legacy efficient",
		verbs:    "deploy profile optimize debug test compile schedule monitor index measure",
		abstract: "latency throughput memory bandwidth contention correctness overhead capacity locality load",
		places:   "data center lab office region rack cluster",
	},
	{
		name:     "architecture",
		nouns:    "cathedral facade tower courtyard staircase window arch vault column roof library gallery garden plaza",
		agents:   "architect builder mason carpenter painter planner sculptor patron",
		adjs:     "gothic elegant narrow spacious ornate plain symmetric tall sunlit modest grand weathered",
		verbs:    "design restore decorate measure build/built/built demolish plan/planned/planned renovate sketch",
		abstract: "proportion light symmetry ornament space weight harmony shade scale comfort",
		places:   "city square district quarter suburb town",
	},
}

// Words shared by every topic.
const (
	causalVerbs  = "affect/affected/affected limit shape reduce increase require support complicate reveal improve delay influence"
	reportVerbs  = "noted observed reported suspected concluded argued explained insisted claimed admitted"
	linkPast     = "became remained seemed proved grew looked"
	linkPresSing = "becomes remains seems proves grows looks"
	adverbs      = "carefully quickly slowly rarely often gradually steadily suddenly patiently quietly deliberately"
	connectors   = "However|In practice|By contrast|As a result|For a while|At first|In the end|Even so|Over time|In most cases|For that reason|Meanwhile"
	evaluations  = "clear|likely|surprising|remarkable|unsurprising|widely accepted|far from obvious|easy to forget"
	modals       = "could should would might must"
	timePhrases  = "during the winter|after the first survey|before the end of the season|within a few weeks|over the following decade|at the start of the year|by the next morning|for several months|in the long run|after a short delay|in the early hours|throughout the summer"
	prepositions = "in near beside around behind"
	firstNames   = "Ada Maria Thomas Elena Samuel Clara Henrik Amara Jonas Priya Lucia Tomas Nadia Oliver Hana Daniel Ines Victor Mira Arthur"
	lastNames    = "Keller Marsh Okafor Lindqvist Moreau Tanaka Alvarez Novak Brandt Costa Haddad Ferreira Larsen Quinn Romano Sato Weber Mendes Kowalski Reyes"
	numberWords  = "two three four five six seven eight nine ten twelve"
)
