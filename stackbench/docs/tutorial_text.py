"""The words a tutorial's text is read by, wherever it is read (the generator turning a page into steps, the
auditor following a step): which fences hold shell commands, Python or output; which sentence before a block names
the file it goes in, introduces one way among several, or hedges the output shown; what promises a check, what is
vague, what points elsewhere, what is a placeholder to fill in; how the environment variables a step uses look.
How shell commands are read is in shell_words."""

import re

SHELL_LANGUAGES = {"bash", "sh", "shell", "console", "zsh", "shell-session", "terminal", "shellsession", "cmd"}
# Shell fences whose lines are a session: prompted commands, the rest their output.
CONSOLE_LANGUAGES = {"console", "shell-session", "terminal"}
PYTHON_LANGUAGES = {"python", "py", "python3", "pycon", "ipython", "doctest"}
OUTPUT_LANGUAGES = {"text", "txt", "output", "plaintext", "plain", "log", "stdout"}
# "Create `x`", "save this as `x`", "copy that to a file `x`", "in `settings.py`": the file a block goes in.
FILE_INTRO = re.compile(
    r"\b(create|update|add|save|edit|write|open|modify|put|change|replace|make|paste|append|insert|in|copy|"
    r"as|named|called|to)\b"
    r"[^`\n]{0,60}`([^`\s]+)`[^`\n]{0,40}$",
    re.IGNORECASE,
)
# The sentence right after a block that tells the reader to save it: "Copy that to a file `main.py`", "Save this
# code as `app.py`", "Put it in `hello.js`".
SAVED_AFTER = re.compile(
    r"^(?:Now,?\s+)?(?:copy|save|put|paste|write)\s+(?:that|this|it|the (?:code|file|example)(?: above)?|"
    r"(?:this|that) (?:code|file|example))\s+(?:to|in|into|as)\s+(?:a\s+)?(?:new\s+)?(?:file\s+)?"
    r"(?:called\s+|named\s+)?`([^`\s]+)`",
    re.IGNORECASE,
)
APPEND_VERBS = {"add", "append", "insert", "paste"}
UPDATE_VERBS = {"update", "edit", "modify", "change", "replace", "open", "in", "to"}
# A path a shell accepts: folders and a file with an extension, or folders ending in a slash. Next.js-style
# segments (`app/artist/[username]/page.tsx`, `(group)`) are paths too.
_SEGMENT = r"[\w.@~\[\]()+-]"
PATH_LIKE = re.compile(
    rf"^(?!https?://)(?:{_SEGMENT}+/)*[\w@\[(-]{_SEGMENT}*\.[A-Za-z0-9]{{1,8}}$|^(?:{_SEGMENT}+/)+{_SEGMENT}+/?$"
)
# Extensions of files people write in tutorials; a dotted identifier (`str.format`, `Promise.all`,
# `project.name`) is not a file.
FILE_EXTENSION = re.compile(
    r"\.(?:py|pyi|toml|cfg|ini|txt|md|rst|json|ya?ml|lock|[mc]?js|tsx?|jsx|vue|svelte|astro|html?|css|s[ac]ss|less|"
    r"env|sh|bash|zsh|ps1|bat|sql|db|sqlite3?|[ct]sv|xml|svg|png|jpe?g|gif|ico|webp|go|rs|rb|php|java|kt|swift|"
    r"[ch]|[ch]pp|cs|mod|sum|gradle|properties|conf|log|ipynb|j2|jinja|hbs|ejs|pug|twig|prisma|graphql|proto|tf|"
    r"lua|r|pl|exs?|erl|hs|ml|dart|zig|nim|cr|jl)$|(?:^|/)(?:Dockerfile|Makefile|Procfile)$",
    re.IGNORECASE,
)
# Introductions of a block that is one of several ways to do the same thing ("With Yarn:", "Using pnpm",
# "Alternatively, …", "Or with Docker:"): a reader follows the first way only.
ALTERNATIVE_INTRO = re.compile(
    r"^\s*(?:(?:or|alternatively),?\s+(?:\w+\s+){0,6}|(?:with|using|via|for)\s+[\w.+ /-]{1,30}:?\s*$)",
    re.IGNORECASE,
)


# A block that follows "Or …" or "Alternatively …": another way to what the block before did.
OR_INTRO = re.compile(r"^\s*(?:or|alternatively)\b", re.IGNORECASE)
# A block shown as a form to adapt ("using the syntax:", "usage:"), not something to type as is.
TEMPLATE_INTRO = re.compile(r"\b(?:syntax|usage|general form|signature|template|pattern)\b\s*:?\s*$", re.IGNORECASE)
# Prose that says the output shown is only an illustration of what the reader's machine prints.
HEDGED_OUTPUT = re.compile(
    r"\b(?:(?:output|result|path|it) (?:may|might|will|can) (?:have|differ|vary|look|be different)|"
    r"differs? (?:for|on|by|between) (?:each|every|your|the)|(?:something|output) (?:like|similar to)|"
    r"depending on your|may (?:differ|vary)|will (?:differ|vary))",
    re.IGNORECASE,
)
# A paragraph that introduces what the reader will see ("This is what should be output if successful:"): the
# block after it is output, whatever its fence says.
OUTPUT_INTRO = re.compile(
    r"\b(?:output|you should see|you(?:'ll| will) see|(?:is|are) printed|prints|looks? like|result is)\b[^.:]*:\s*$",
    re.IGNORECASE,
)
# A paragraph that shows a command as a what-if ("If you go to your terminal and type:", "Suppose you run:"):
# an illustration of an idea, not a step; "If you haven't already, install…" is a step.
HYPOTHETICAL_INTRO = re.compile(
    r"^(?:(?:for example|for instance|so|and),?\s+)?(?:if|suppose|imagine|say)\s+you\b"
    r"(?![^.:]*\b(?:haven't|have not|don't|do not|not already|need|want)\b)"
    r"[^.]*:\s*$",
    re.IGNORECASE,
)
# A path the reader is told to use ("open `config.toml`", "cd into `my-app`", "run `./build.sh`"): one that
# does not exist when they get there is a gap; a path the text only talks about is not.
PATH_TO_USE = re.compile(
    r"\b(?:open|edit|modify|run|execute|load|source|read|update|change|cd(?:\s+into)?|navigate\s+to|go\s+to|"
    r"enter|import|inside)\b[^.`\n]{0,40}`([^`\s]+)`",
    re.IGNORECASE,
)
# A paragraph that presents a file's state rather than telling the reader to write it ("the wizard should have
# injected these scripts in your `package.json`", "your `pyproject.toml` now looks like this"): the block is
# compared with the file, never written over it.
SHOWN_STATE = re.compile(
    r"\b(?:should (?:now |also )?(?:have|contain|look)|will (?:now )?(?:have|contain|look)|looks? like|"
    r"(?:now )?contains|(?:was|were|is|are|been|have|has) (?:generated|created|injected|added|written)|"
    r"you(?:'ll| will| should) (?:see|find))\b",
    re.IGNORECASE,
)
# A sentence presenting a drawn tree as what the steps made: a shown state, or the words of making it.
MADE_FILES = re.compile(
    rf"{SHOWN_STATE.pattern}|\b(?:generated|created|creates|will create|scaffold(?:ed|s)?)\b", re.IGNORECASE
)
WRITE_IMPERATIVE = re.compile(
    r"^\s*(?:(?:now|then|next|first|finally),?\s+)?(?:create|add|save|write|put|paste|edit|update|change|replace|"
    r"open|copy|make|insert|append|modify)\b",
    re.IGNORECASE,
)
# A file tree drawn with box characters: a listing to compare with, never commands.
TREE_DRAWING = re.compile(r"^\s*(?:[│|]\s*)*[├└]──?", re.MULTILINE)
RUN_INTRO = re.compile(r"(?:\b(?:run|execute|type|enter|invoke|use)\b|\bcommand\b)[^.]*:\s*$", re.IGNORECASE)
PROMPTED = re.compile(r"^\s*(?:\$|%|>>>|❯)\s")
PARAGRAPH_TARGET = re.compile(r"\b(?:to|in|into|inside) (?:your|the|a) `([^`\s]+)`(?: file)?", re.IGNORECASE)
# Prose that hands a name to the reader: "your `client`", "replace `db` with ...": their own object, not the page's.
READERS_NAME = re.compile(r"\b(?:your(?:\s+own)?|replace)\s+`([A-Za-z_]\w*)`", re.IGNORECASE)
# A bare name the prose sets in code (`path`, `PREFIX`): the text talks about it, so a block that uses it
# without defining it leaves it to what the text says it is.
NAME_IN_PROSE = re.compile(r"`([A-Za-z_]\w*)`")
# Prose that gives the reader a function to write (a custom index, your own hook, "provide a function that"): a
# signature listed beside it is the shape of the reader's function, not one of the library's.
READERS_FUNCTION = re.compile(
    r"\b(?:custom|your\s+own)\b|\b(?:write|provide|implement|define|create|pass|given)\s+(?:in\s+)?(?:a|an|your)\s+"
    r"(?:own\s+)?(?:custom\s+)?(?:function|hook|callback|handler|callable)\b",
    re.IGNORECASE,
)

# -- what the reader's text promises, and what it leaves unclear ----------------------------------------------------
VAGUE_PHRASES = [
    r"in the usual way",
    r"as usual",
    r"the usual way",
    r"appropriate(ly)?",
    r"as needed",
    r"as necessary",
    r"accordingly",
    r"etc\.",
    r"and so on",
    r"somehow",
    r"whatever",
    r"suitable",
    r"properly",
    r"the right (settings|values|way|options)",
    r"as you see fit",
    r"your preferred",
    r"and similar",
    r"some configuration",
    r"relevant settings",
]
INSTRUCTION_VERBS = (
    r"\b(apply|configure|set up|setup|tune|install|create|update|add|run|deploy|enable|adjust|"
    r"modify|edit|change|write|build|start|connect|initiali[sz]e|migrate|register|load|open|"
    r"replace|import|call|execute|define|generate)\b"
)
VERIFICATION_CUES = (
    r"\b(prints?|outputs?|should (see|print|show|return|display|look)|you('ll| will) see|returns?|"
    r"displays?|shows?|expected|verify|verif(y|ies)|check that|confirm|success indicators?|"
    r"succeeds?|you should have|responds? with|creates? a file)\b"
)
EXPECTED_OUTPUT = re.compile(
    r"(?:prints?|outputs?|returns?|shows?|displays?|should see|you(?:'ll| will) see|"
    r"responds? with)\s*:?\s*`([^`\n]+)`",
    re.IGNORECASE,
)
CROSS_REFERENCE = re.compile(
    r"\b(see|refer to|as described in|as explained in|as shown in|check out|read more|covered in|described in|"
    r"explained in|consult|documented in|follow the|according to)\b[^.\n]{0,80}?\b(guide|docs|documentation|"
    r"tutorial|section|page|chapter|reference|article|instructions|readme|quickstart|manual)\b",
    re.IGNORECASE,
)
LINK = re.compile(r"\[[^\]]+\]\([^)]+\)|https?://|<https?:")
PLACEHOLDER = re.compile(
    r"<\s*(?=[^<>\n]*(?:your|my|key|token|name|path|id|url|password|secret|value|project|user|host|port|[A-Z]{3}))"
    r"[A-Za-z_][\w .-]{0,40}>|\b(?:YOUR|MY)_[A-Z0-9_]+\b|\byour[-_](?:api[-_])?(?:key|token|secret|password)\b|"
    r"\bx{4,}\b|\bREPLACE_ME\b|\bCHANGEME\b|"
    # A repository named by its generic shape (`user/project`, `owner/repo`): the reader must pick a real one.
    r"(?<![\w./-])(?:user|username|owner|org|organization|your-?name|author)/(?:project|repo|repository|name)"
    r"(?![\w/-])",
)
LOCAL_URL = re.compile(r"https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::\d+)?(?:/[^\s)`'\"<>\]]*)?")

# -- operationsForAgent: numbered prose naming the step's work ----------------------------------------------------
OPS_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+", re.MULTILINE)
RUN_LABEL = re.compile(r"\b(run|execute|type|enter|launch|start|install|command)\b[^:]{0,30}:\s*(.+)$", re.IGNORECASE)
NOT_WORK = re.compile(
    r"^\s*(?:success indicators?|expected (?:output|result)|you should see|notes?|tips?|warning|caution|important)\b",
    re.IGNORECASE,
)

# -- sub-sections and tabs that offer one way each ------------------------------------------------------------------
TAB = re.compile(r"^(\s*)===\s+\S")
SUBHEADING = re.compile(r"^(#{3,6})\s+(.+?)\s*#*\s*$")
WAY_WORDS = {"using", "with", "via", "on", "for", "from", "option", "method", "approach", "alternative", "in"}
OPERATING_SYSTEMS = {"linux", "macos", "mac", "windows", "unix", "ubuntu", "debian", "osx"}

# -- environment variables a step uses ------------------------------------------------------------------------------
STANDARD_ENV = {
    "HOME",
    "PATH",
    "PWD",
    "OLDPWD",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "TMPDIR",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "CI",
    "HOSTNAME",
    "UID",
    "RANDOM",
    "SECONDS",
    "LINENO",
    "PPID",
}
ENV_IN_SHELL = re.compile(r"\$\{?([A-Z][A-Z0-9_]{2,})\}?")
ENV_IN_PYTHON = re.compile(r"os\.(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*['\"]([A-Z][A-Z0-9_]+)['\"]")
ENV_ASSIGNED = re.compile(r"(?:^|[\s;&|])(?:export\s+)?([A-Z][A-Z0-9_]+)=")


# "Python 3.12+", "requires Python 3.12", "on 3.12 or newer": a Python version the text names.
PYTHON_VERSION = re.compile(
    r"\bpython\s*v?(3\.\d+)|\b(3\.\d+)\s*(?:\+|or (?:newer|later|above|higher)|and (?:newer|later|above|up))",
    re.IGNORECASE,
)


def named_python(text: str) -> str | None:
    """The newest Python version the text names ("3.12" for "on Python 3.12+"), if any."""
    named = [match.group(1) or match.group(2) for match in PYTHON_VERSION.finditer(text)]
    return max(named, key=lambda version: int(version.split(".")[1]), default=None)


def is_file_path(text: str) -> bool:
    """A path a reader could create: shell-accepted folders and a name with a file extension (or a folder)."""
    if not PATH_LIKE.match(text):
        return False
    name = text.rstrip("/").rsplit("/", 1)[-1]
    if text.endswith("/") or ("/" in text and "." not in name):
        return True
    return FILE_EXTENSION.search(text) is not None


# "The snippets below assume the `client` defined above", "in the examples that follow, `app` is the one from the
# quickstart": the blocks after the sentence build on definitions shown before it.
BUILDS_ON_EARLIER = re.compile(
    r"\b(?:snippets?|examples?|blocks?|code)\s+(?:below|that follows?|which follows?|after this)\b"
    r"[^.]*?(?:\b(?:defined|created|shown|set up|from)\s+(?:above|earlier|before|previously)\b|\bthe one (?:from|in)\b)"
    r"|\bin the (?:snippets?|examples?|blocks?) (?:below|that follow)\b[^.]*?\bthe one (?:from|in|defined)\b",
    re.IGNORECASE,
)

# The sentence right before a block that shows it as what not to write: "You might be tempted to use a check:",
# "Don't do this:". The page argues against the code; the reader does not run it.
TEMPTATION_INTRO = re.compile(r"\btempted\s+to\b|\b(?:don'?t|do\s+not)\s+do\s+(?:this|that)\b", re.IGNORECASE)
# A section that weighs the library against others ("Why not the standard library?", "Comparison with Arrow"):
# its code that never uses the library shows the others' ways.
COMPARISON_HEADING = re.compile(
    r"^\s*why\s+not\b|\bcompar(?:ed|ison|ing)\s+(?:to|with)\b|\bvs\.?(?!\w)|\bversus\b|\balternatives?\s+to\b",
    re.IGNORECASE,
)


# -- code a page about upgrading shows as the old release's, for comparison ---------------------------------------
UPGRADE_PAGE = re.compile(
    r"\b(?:migrat(?:e|es|ing|ion)|upgrad(?:e|es|ing)|porting|breaking changes?|what'?s new|moving (?:from|to)|"
    r"deprecations?)\b",
    re.IGNORECASE,
)
# A release as docs name it: "1.x", "v1", "version 1.2", "1.4" (a bare "1", as in "Step 1", is no release).
_RELEASE = r"(?:(?:version\s+|v)(?P<{0}>\d+(?:\.\d+)*(?:\.x)?)|(?P<{0}_dotted>\d+(?:\.\d+)*\.(?:\d+|x)))"
# A tab, a fence title or a heading that names the old code: "Before", "Old API", "Legacy", "1.x", "v1".
OLD_CODE_LABEL = re.compile(
    r"^\s*(?:(?P<word>before|old|older|previous|legacy|deprecated)(?:\s+(?:api|version|code|way|style|syntax|usage))?|"
    + _RELEASE.format("release")
    + r")\s*:?\s*$",
    re.IGNORECASE,
)
# The words right after a block on a page about upgrading that present the next block as its replacement ("turns
# into", "can now be written as"): the block is the code from before the change.
REPLACED_BY_NEXT = re.compile(
    r"^\s*(?:\w+\s+){0,2}?(?:turns into|becomes|(?:can|should|must|is) (?:now )?(?:be )?(?:written|rewritten|expressed)"
    r"(?: as)?|(?:is|are) (?:now )?replaced (?:by|with)|changes to)\b[^.\n]{0,40}:?\s*$",
    re.IGNORECASE,
)
# The sentence right before a block that presents it as the old code: "Before:", "Previously, you wrote:",
# "With the old API:", "In 1.x, this was:".
OLD_CODE_INTRO = re.compile(
    r"^\s*(?:(?P<word>before|previously|formerly|old|legacy)\s*(?:\([^)]*\))?\s*[:,]|"
    r"(?:in|with|using|under)\s+the\s+(?P<adjective>old|older|previous|legacy)\b|"
    r"(?:in|with|using|under)\s+(?:\S+\s+)?" + _RELEASE.format("release") + r"\s*(?:and\s+(?:earlier|older)\s*)?[,:])",
    re.IGNORECASE,
)


# The release a page about upgrading moves its reader to, as its title names it: "Migrating to Shapes 4.0",
# "Upgrading to v2". Code labelled with that release is the new code, whatever later release is validated.
UPGRADE_TARGET = re.compile(r"\bto\s+(?:[A-Za-z][\w.-]*\s+)?" + _RELEASE.format("release") + r"\b", re.IGNORECASE)


# Text that limits what it says to older releases of something: "only applicable for pandas versions < 2.0",
# "this only happens before 3.1".
OLDER_RELEASES_ONLY = re.compile(
    r"\bonly\b[^.]*?(?:\\?<=?|\bolder than\b|\bbefore\b|\bprior to\b)\s*v?\d+(?:\.\d+)*", re.IGNORECASE
)


def release_named(match: re.Match[str]) -> str | None:
    """The release an OLD_CODE_LABEL, OLD_CODE_INTRO or UPGRADE_TARGET match names ("1.x"), if it names one."""
    return match.group("release") or match.group("release_dotted")
