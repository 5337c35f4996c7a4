"""The newcomer a sandbox stands for, as its commands see them: their uid, their home with the work folder, their
own virtualenv and npm prefix, the folders of the run's state and tools, and their shell's environment."""

from stackbench.sandbox.settings import SandboxSettings

READER_UID = 1000
HOME = "/home/reader"
WORK = f"{HOME}/work"
STATE = "/run/stackbench"
TOOLS = "/run/stackbench-tools"
VENV = f"{HOME}/.venv"
NPM_PREFIX = f"{HOME}/.npm-global"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def reader_environment(settings: SandboxSettings, home: str, tmp: str) -> dict[str, str]:
    """A newcomer's shell environment: their own virtualenv and npm prefix first on PATH, plain output, no
    prompts; plus what is passed through (proxies, locale, pip options). Never the app's own variables."""
    env = dict(settings.environment)
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        PATH=f"{home}/.venv/bin:{home}/.npm-global/bin:{SYSTEM_PATH}",
        HOME=home,
        USER="reader",
        LOGNAME="reader",
        SHELL="/bin/bash",
        TERM="dumb",
        TMPDIR=tmp,
        PYTHONUNBUFFERED="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        NO_COLOR="1",
        CI="1",
        # No one at the keyboard: a pager shows everything, an editor closes at once without changes.
        PAGER="cat",
        GIT_PAGER="cat",
        EDITOR="true",
        VISUAL="true",
        DEBIAN_FRONTEND="noninteractive",
        # The reader has a screen, the sandbox none: Qt draws its windows off screen instead of aborting.
        QT_QPA_PLATFORM="offscreen",
        NPM_CONFIG_PREFIX=f"{home}/.npm-global",
        NPM_CONFIG_UPDATE_NOTIFIER="false",
        NPM_CONFIG_FUND="false",
    )
    return env
