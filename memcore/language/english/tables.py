"""The English frame tables: which lemmas make which attribute. Thin on purpose.

Everything else (who the subject is, what the value is, negation, time) comes from
spaCy's dependency parse and lemmas, not from word lists.
"""

from __future__ import annotations

# (verb lemma, preposition or "" for a direct object) -> attribute.
VERB_FRAMES: dict[tuple[str, str], str] = {
    ("live", "in"): "residence", ("live", "at"): "residence",
    ("move", "to"): "residence", ("relocate", "to"): "residence",
    ("settle", "in"): "residence", ("base", "in"): "residence",
    ("reside", "in"): "residence", ("reside", "at"): "residence",
    ("work", "at"): "employer", ("work", "for"): "employer", ("work", "with"): "employer",
    ("employ", "by"): "employer", ("join", ""): "employer", ("hire", "by"): "employer",
    ("hire", "at"): "employer", ("teach", "at"): "employer", ("nurse", "at"): "employer",
    ("volunteer", "at"): "employer", ("intern", "at"): "employer",
    ("work", "as"): "job", ("hire", "as"): "job",
    ("read", ""): "reading",
    ("learn", ""): "learning", ("study", ""): "studying", ("study", "at"): "school",
    ("attend", ""): "school",
    ("use", ""): "uses", ("speak", ""): "speaks", ("drive", ""): "owns",
    ("own", ""): "owns", ("buy", ""): "owns", ("adopt", ""): "owns",
    ("call", ""): "name", ("go", "by"): "name",
    ("marry", ""): "relation:partner", ("marry", "to"): "relation:partner",
    ("date", ""): "relation:partner",
    ("take", ""): "takes", ("train", "for"): "goal",
    # tastes and skills (multi-valued: one never retires another; "doesn't like X any
    # more" ends "likes X"), where someone comes from, a diagnosis. Not "prefer": "prefers
    # code examples over long explanations" is most often how the assistant should answer,
    # the instruction it is one fact with.
    ("like", ""): "likes", ("love", ""): "likes", ("enjoy", ""): "likes",
    ("adore", ""): "likes", ("hate", ""): "dislikes", ("dislike", ""): "dislikes",
    ("detest", ""): "dislikes", ("know", ""): "knows",
    ("come", "from"): "origin", ("hail", "from"): "origin",
    ("diagnose", "with"): "health",
}

# Nouns naming an attribute in "<subject>'s <noun> is <value>".
NOUN_FRAMES: dict[str, str] = {
    "name": "name", "nickname": "nickname", "age": "age", "birthday": "birthday",
    "phone": "contact:phone", "number": "contact:phone", "mobile": "contact:phone",
    "cell": "contact:phone", "email": "contact:email", "e-mail": "contact:email",
    "mail": "contact:email", "address": "contact:address",
    "job": "job", "occupation": "job", "profession": "job", "role": "job",
    "position": "job", "title": "job",
    "employer": "employer", "company": "employer", "workplace": "employer",
    "office": "employer",
    "home": "residence", "hometown": "residence", "city": "residence",
    "language": "main_language", "diet": "diet", "school": "school",
    "university": "school", "team": "team", "commute": "commute",
    "wife": "relation:partner", "husband": "relation:partner",
    "partner": "relation:partner", "girlfriend": "relation:partner",
    "boyfriend": "relation:partner", "fiance": "relation:partner",
    "fiancee": "relation:partner", "spouse": "relation:partner",
    "doctor": "relation:doctor", "gp": "relation:doctor", "dentist": "relation:dentist",
    "therapist": "relation:therapist", "physio": "relation:physio",
    "medication": "medication", "medicine": "medication", "dose": "medication:dose",
}
# Units of work one is on or in, never an employer nor a home ("architect for the loyalty
# migration project", "moving to the pricing team"): the team, or the project.
TEAM_UNITS = frozenset({"team", "squad", "department", "unit", "division", "crew", "desk"})
PROJECT_UNITS = frozenset({"project", "platform", "programme", "program", "initiative",
                           "workstream", "migration", "product", "account", "rollout"})
# Modifiers that do not say which unit ("another project", "a new team").
UNNAMED_UNIT = frozenset({"other", "another", "new", "different", "same", "old", "big",
                          "small", "current", "next"})
# Verbs that put someone on a unit of work with any preposition ("work on", "transfer to").
UNIT_VERBS = frozenset({"work", "move", "transfer", "switch", "join", "assign", "put"})
# Present-tense verbs of how one lives that chat opens a sentence with, the "I" left out
# ("work part time at the skate shop", "live near the park"); no request to the listener
# opens with them.
SELF_VERBS = frozenset({"work", "live", "teach", "volunteer", "commute", "freelance"})
# Verbs that take up a thing in place of another ("upgraded to Python 3.12"): the thing
# is what an instruction about it names.
ADOPT_VERBS = frozenset({"upgrade", "switch", "migrate", "standardise", "standardize",
                         "convert", "downgrade"})
# Things an instruction is about, named by other words: an instruction about
# explanations or replies governs the answers ("full explanations" after "keep answers
# short": the later one holds).
INSTRUCTION_THINGS: dict[str, str] = {"explanation": "answer", "reply": "answer",
                                      "response": "answer", "limit": "answer",
                                      "length": "answer"}
# A contact noun names which contact by its compound ("e-mail address", "home address").
CONTACT_COMPOUNDS: dict[str, str] = {"email": "contact:email", "e-mail": "contact:email",
                                     "mail": "contact:email", "phone": "contact:phone",
                                     "mobile": "contact:phone", "landline": "contact:phone"}
# Modifiers that make a noun a favourite ("favourite colour") or the main one.
FAVOURITE = frozenset({"favourite", "favorite", "fave", "fav"})

# Family and pets: "has a sister", "<subject>'s dog" (multi-valued: relation:<noun>).
KIN = frozenset({
    "sister", "brother", "son", "daughter", "child", "kid", "mother", "mom", "mum",
    "father", "dad", "parent", "grandmother", "grandfather", "grandson", "granddaughter",
    "grandchild", "aunt", "uncle", "cousin", "niece", "nephew", "friend", "colleague",
    "boss", "manager", "neighbour", "neighbor", "twin", "stepson", "stepdaughter",
})
PETS = frozenset({"dog", "cat", "puppy", "kitten", "rabbit", "hamster", "parrot", "horse",
                  "fish", "bird", "tortoise", "turtle", "guinea", "pet", "snake", "lizard"})

# Adjectives that are a diet when predicated of a person ("is vegetarian").
DIETS = frozenset({"vegetarian", "vegan", "pescatarian", "pescetarian", "flexitarian",
                   "omnivore", "carnivore", "keto", "paleo", "teetotal", "sober",
                   "gluten-free", "kosher", "halal"})

# Verbs whose object (or subject, when intransitive) comes to an end.
END_VERBS = frozenset({
    "die", "sell", "leave", "quit", "stop", "finish", "heal", "recover", "cancel",
    "close", "lose", "divorce", "retire", "graduate", "end", "abandon", "ditch",
    "drop", "complete", "resign", "shut", "scrap", "pass", "outgrow", "discharge", "mend",
})
# "gave up X", "broke up with X", "moved out of X", "got rid of X": verb + particle.
END_PHRASAL = frozenset({("give", "up"), ("break", "up"), ("move", "out"), ("get", "rid"),
                         ("pass", "away"), ("drop", "out"), ("split", "up")})
# Verbs that end something only without an object: "Ann and Callum split" (her partner);
# "we split the bill" ends nothing.
ENDS_ONLY_ALONE = frozenset({("split", "")})
# End verbs whose subject itself ends when they have no object ("Rex died", "the shop
# closed"); any other end verb without an object names nothing that ended ("Ann quit").
SELF_ENDING = frozenset({"die", "pass", "close", "end", "shut", "finish", "disband"})
# Of those, the ones a person or pet ends by ("Rex died", "Gran passed away"); the rest
# end a thing only ("the lease ended"; "Jo finished at five" ends nothing).
LIFE_ENDING = frozenset({"die", "pass"})
# Particles that make an ending verb say where something came out: "ended up at the
# walk-in", "wound up in Leeds".
RESULT_PARTICLES = frozenset({"up"})
# Verbs of wanting something for oneself: "wants to be called Lena".
WANTING = frozenset({"want", "prefer", "like", "love", "wish"})
# Words for a post, and the verbs that take one up: "got a job at Acme", "started a new
# role with Monzo", "accepted the position at Stripe" (employer Acme); "applied for a job
# at Acme" or "was offered one" takes nothing up.
POST_NOUNS = frozenset({"job", "position", "post", "role", "internship", "placement",
                        "apprenticeship", "residency", "fellowship", "contract"})
TAKING_UP = frozenset({"get", "land", "start", "accept", "take", "begin", "secure", "find",
                       "have", "score", "snag"})
# Going missing, (verb lemma, the word that makes it so): a pet or a thing that ran away,
# went missing or disappeared is gone ("Mochi ran away", "Rex vanished"). Never of a
# person or the speaker (memcore/language/english/reader.py, _went_missing).
MISSING = frozenset({("run", "away"), ("run", "off"), ("go", "missing"), ("disappear", ""),
                     ("vanish", "")})
MISSING_WORDS = frozenset(word for _, word in MISSING if word)
# Where a missing pet ran away from and still went missing ("ran away from home"); from
# anything else it fled and went on ("ran away from the bull").
LEFT_HOME = frozenset({"home", "house", "garden", "yard", "flat", "us", "me"})
# When, not what: "died on 10 January", "quit last night" name no ended thing.
TIME_NOUNS = frozenset({
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "sunday", "night", "morning", "afternoon", "evening", "day",
    "week", "weekend", "month", "year", "today", "yesterday", "tonight"})
# End verbs without an object that end one attribute of their subject.
ENDED_ATTRIBUTE: dict[tuple[str, str], str] = {("break", "up"): "relation:partner",
                                               ("split", "up"): "relation:partner",
                                               ("split", ""): "relation:partner",
                                               ("divorce", ""): "relation:partner",
                                               ("retire", ""): "job", ("resign", ""): "job"}
# Verbs that replace one value by another: the "from" / replaced object ends.
SWITCH_VERBS = frozenset({"switch", "move", "change", "go", "migrate", "convert",
                          "replace", "swap", "trade", "exchange"})
# Predicates saying an ailment is over ("<subject>'s knee is fine now").
HEALED = frozenset({"fine", "better", "healed", "recovered", "okay", "ok", "well",
                    "over", "done", "gone", "finished", "cured"})
# Parts of the body: "left"/"right" before one is a side ("Left Achilles. Tendinopathy"
# is no leaving).
BODY_PARTS = frozenset({
    "achilles", "knee", "ankle", "wrist", "hip", "shoulder", "elbow", "hand", "foot", "leg",
    "arm", "eye", "ear", "hamstring", "calf", "shin", "toe", "finger", "thumb", "lung",
    "kidney", "quad", "heel", "side", "breast", "tendon", "hamstrings", "knees", "feet"})
# Verbs whose possessed subject is still the owner's ailment ("my knee healed").
HEALED_VERBS = frozenset({"heal", "recover", "improve", "clear", "mend"})
# Instruction verbs that withdraw what follows ("asks the assistant to stop X").
WITHDRAW = frozenset({"stop", "quit", "drop", "avoid", "skip", "omit", "cut", "ditch",
                      "remove", "lose", "ignore", "disregard"})
# The speaker asking the assistant ("asks the assistant to ...", "wants ...").
ASK_VERBS = frozenset({"ask", "tell", "want", "instruct", "request", "prefer", "like"})
ASSISTANT_WORDS = frozenset({"assistant", "you"})
# Adverbs that negate a clause ("no longer", "never", "anymore").
NEGATING_ADVERBS = frozenset({"never", "anymore", "longer"})
# Job nouns: an attribute noun with one of these endings is an occupation ("is a nurse"
# is in the list; "is a fan" is not).
JOB_SUFFIXES = ("er", "or", "ist", "ian", "ant", "ent", "eer", "ect", "ive", "ic", "ee")
JOB_NOUNS = frozenset({"nurse", "chef", "doctor", "lead", "manager", "waitress", "postdoc",
                       "intern", "ceo", "cto", "cfo", "founder", "barista", "cook", "clerk",
                       "pilot", "surgeon", "tutor", "coach", "editor", "artist", "nanny",
                       "carer", "accountant", "dj", "dev", "engineer", "judge", "lawyer",
                       "freelancer", "midwife", "paramedic", "vet", "hairdresser",
                       "electrician", "plumber", "baker", "gardener", "student"})
NOT_JOB = frozenset({"member", "fan", "beginner", "user", "owner", "customer", "brother",
                     "sister", "mother", "father", "daughter", "son", "partner", "person",
                     "lover", "reader", "player", "other", "introvert", "extrovert",
                     "believer", "smoker", "drinker", "speaker", "learner", "parent",
                     "grandparent", "grandmother", "grandfather", "neighbour", "neighbor",
                     "friend", "fighter", "survivor", "perfectionist", "optimist",
                     "pessimist", "regular", "native", "runner", "swimmer", "walker",
                     "rider", "cyclist", "patient", "resident", "client", "supporter",
                     "follower", "subscriber", "volunteer", "tenant", "winner", "loser",
                     "vegetarian", "vegan", "pescatarian", "diabetic", "asthmatic"})
# Words before the name in a self-introduction ("*name's* Carl, 52, ...").
INTRO_LEADS = frozenset({"hi", "hey", "hello", "yo", "morning", "evening", "name", "'s",
                         "it", "this", "is"})
# Prepositions that place a job or a person ("driver out of Swindon", "in Hull").
PLACE_PREPS = frozenset({"in", "of", "near"})
# Words before a place in a self-introduction's fragment ("*based in* Lisbon").
PLACE_LEADS = frozenset({"in", "from", "near", "based in", "living in", "out of",
                         "based near", "live in", "originally from"})
# Job nouns of someone who studies: "a law student at Edinburgh" studies there (the
# school, not an employer) and "is" one rather than "works as" one.
STUDY_NOUNS = frozenset({"student", "pupil", "undergrad", "undergraduate", "postgrad",
                         "postgraduate", "fresher", "schoolboy", "schoolgirl"})
# A change said in the future, not a state: "I *will* join Acme", "I'm *going* to move"
# (memcore.language.english.statements).
FUTURE_AUX = frozenset({"will", "'ll", "shall", "gon"})
PLAN_VERBS = frozenset({"go", "plan", "want", "hope", "intend", "aim", "need"})
# A plan to come to own something ("thinking about getting a road bike", "saving for a
# laptop"): the plan's verb, and the verbs of getting it. Its fulfilment ("bought the
# bike") retires the plan.
THINKING_OF = PLAN_VERBS | frozenset({"think", "consider", "look", "save"})
GETTING = frozenset({"get", "buy", "adopt", "order", "purchase", "lease", "rent"})
# Words that say a job is over ("retired teacher", "ex-nurse", "former editor").
PAST_JOB_WORDS = frozenset({"retired", "ex", "former", "formerly", "ex-"})

# Common nouns a person lives in or moves to ("moved to a flat", "live in the
# countryside"); any other common noun after "moved to" is not a home ("moved to
# another project", "moved to nights"): a residence needs one of these or a name.
DWELLINGS = frozenset({
    "house", "flat", "apartment", "home", "bungalow", "cottage", "studio", "condo",
    "place", "room", "city", "town", "village", "country", "countryside", "coast",
    "seaside", "suburb", "suburbs", "area", "neighbourhood", "neighborhood", "street",
    "road", "island", "abroad", "capital", "north", "south", "east", "west", "centre",
    "center", "outskirts", "estate", "farm", "campus", "dorm", "hall", "halls", "mainland",
    "state", "province", "county", "region", "district", "borough", "block", "building",
})

# Words that are no value on their own (pronouns, placeholders).
NO_VALUE = frozenset({"it", "that", "this", "them", "they", "one", "thing", "stuff",
                      "something", "everything", "anything", "he", "she", "him", "her",
                      "there", "here", "what", "which", "who"})

# Chat spellings the parser misreads, by whole word (case-sensitive: "U" stays).
CHAT_WORDS: dict[str, str] = {
    "im": "I'm", "i'm": "I'm", "i": "I", "ive": "I've", "i've": "I've", "id": "I'd",
    "ill": "I'll", "u": "you", "ur": "your", "r": "are", "n": "and", "dont": "don't",
    "doesnt": "doesn't", "cant": "can't", "wont": "won't", "isnt": "isn't",
    "didnt": "didn't", "wk": "week", "wks": "weeks", "yr": "year", "yrs": "years",
    "gf": "girlfriend", "bf": "boyfriend", "bc": "because", "tho": "though",
    "thx": "thanks", "pls": "please", "plz": "please", "rn": "right now",
    "goin": "going", "doin": "doing", "nothin": "nothing", "somethin": "something",
    "abt": "about", "smth": "something", "sth": "something", "cuz": "because",
    "coz": "because", "ppl": "people", "tbh": "to be honest", "btw": "by the way",
    "imo": "in my opinion", "bout": "about", "hav": "have", "tht": "that",
    "shud": "should", "wud": "would", "wat": "what", "wot": "what", "wut": "what",
    "ngl": "honestly", "Ngl": "Honestly", "NGL": "Honestly", "idk": "I don't know",
    "lemme": "let me", "gimme": "give me",
}

# Penn tags of a finite verb: a fragment with one is a clause of its own.
FINITE_TAGS = frozenset({"VBZ", "VBP", "VBD", "MD"})
