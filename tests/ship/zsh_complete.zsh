# Drives zsh's completion the way a user does: for each LINE, an interactive zsh (in a
# pseudo-terminal, zpty) with DIR on $fpath types LINE, TAB, Enter, and everything it
# printed is written out after "=== LINE". A unique match shows as the completed line
# (`amqp` is a function there that prints ARGS[its arguments]); several show as a list.
#
#   zsh -f zsh_complete.zsh DIR LINE...
zmodload zsh/zpty
dir=$1
shift
poll() {  # read the shell's output into $out until it matches $1, for up to $2 tenths of a second
    local i chunk
    for i in {1..$2}; do
        while zpty -r -t z chunk; do out+=$chunk; done
        [[ $out == $~1 ]] && return 0
        sleep 0.1
    done
    return 1
}
for input in "$@"; do
    zpty z env PATH=$PATH HOME=$HOME XDG_CONFIG_HOME=$XDG_CONFIG_HOME AMQP_CONFIG=$AMQP_CONFIG TERM=dumb zsh -f -i
    out=''
    zpty -w z "PS1='%% '; fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -D; LISTMAX=10000; zstyle ':completion:*' list-prompt ''; amqp() { print -r -- \"ARGS[\$*]\" }; print RE''ADY"
    poll '*READY*%*' 600 || { print -u2 "zsh_complete: zsh did not start"; exit 1; }
    out=''
    zpty -w -n z "$input"$'\t'
    # Done when `amqp` ran (one match) or the prompt came back under a list (several).
    # Enter again until then: zsh drops keys typed while a completion runs a command
    # (amqp --list-profiles), as it resets the terminal.
    for try in {1..30}; do
        zpty -w -n z $'\r'
        poll '(*ARGS\[*\]*|*'$'\n''%*)' 20 && break
    done
    [[ $out == (*ARGS\[*\]*|*$'\n'%*) ]] || { print -u2 "zsh_complete: no answer for: $input"; exit 1; }
    print -r -- "=== $input"
    print -r -- "${out//$'\r'/}"
    zpty -d z
done
