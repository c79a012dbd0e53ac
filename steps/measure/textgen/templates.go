package textgen

// templates are the sentence shapes; each {TAG} is filled by Generator.fill with a phrase of
// the current topic that agrees in number with the rest of the sentence.
var templates = []string{
	"{AG} {PAST} {NP} {PP}.",
	"{CONN}, {AG} {PAST} {NP}.",
	"{AGp} {ADV} {BASE} {NP} {PP}.",
	"{NPs} {CPRES3} {NP} when the {ABS} {LINK3} {ABSADJ}.",
	"Although {AG} {PAST} {NP}, the {ABS} {LINKP} {ABSADJ}.",
	"{NPs} was {PART} by {AGp} {PP}.",
	"In {YEAR}, {AG} {PAST} {NP} {PP}.",
	"It {ISWAS} {EVAL} that {NP} {CPAST} the {ABS} of {NP}.",
	"{AG} {REPORT} that {NPs} {MODAL} {CBASE} the {ABS} of {NP}.",
	"The {ABS} of {NP} {LINKP} {ABSADJ} {PP}.",
	"Why did {AGp} {BASE} {NP} {PP}?",
	"{AGp} {PAST} {NP}, and {AGp} {PAST} {NP} soon after.",
	"For {AGp}, the {ABS} of {NP} mattered more than {NP}.",
	"{CONN}, the {ABS} of {NP} {CPAST} {NP} more than anyone had expected.",
	"{NUM} {ADJ} {NOUNp} {LOCV} {PREP} the {PLACE}, and the {ABS} {LINKP} {ABSADJ}.",
	"{AG} {ADV} {PAST} {NP}; {NPs} {LINKP} {ADJ}.",
	"Consider {NPs} {PP}.",
	"{NPp} {CPAST} the {ABS} of {NP}, which {AGp} {PAST} {PP}.",
	"Few expected that {AG} would {BASE} {NP} so {ADV}.",
	"{AGp} still disagree about whether {NPs} {CPAST} the {ABS} of {NP}.",
}
