// libedit (BSD editline) for `coffer shell`: line editing, in-memory history, completion.
// el_set and history are variadic, which Swift cannot call: one typed wrapper per use.
#include <histedit.h>

static inline int coffer_el_set_prompt(EditLine *el, char *(*prompt)(EditLine *)) {
    return el_set(el, EL_PROMPT, prompt);
}
static inline int coffer_el_set_editor(EditLine *el, const char *name) { return el_set(el, EL_EDITOR, name); }
static inline int coffer_el_set_signal(EditLine *el, int handle) { return el_set(el, EL_SIGNAL, handle); }
static inline int coffer_el_add_function(
    EditLine *el, const char *name, const char *help, unsigned char (*function)(EditLine *, int)) {
    return el_set(el, EL_ADDFN, name, help, function);
}
static inline int coffer_el_bind(EditLine *el, const char *key, const char *function) {
    return el_set(el, EL_BIND, key, function, NULL);
}
static inline int coffer_el_set_history(EditLine *el, History *memory) { return el_set(el, EL_HIST, history, memory); }
static inline int coffer_el_set_read_character(EditLine *el, el_rfunc_t read) { return el_set(el, EL_GETCFN, read); }
static inline int coffer_history_set_size(History *memory, int size) {
    HistEvent event;
    return history(memory, &event, H_SETSIZE, size);
}
static inline int coffer_history_enter(History *memory, const char *line) {
    HistEvent event;
    return history(memory, &event, H_ENTER, line);
}
// Reads the terminal on standard input; echoes and prompts on standard error, so standard output
// carries only the commands' data.
static inline EditLine *coffer_el_init_terminal(const char *program) { return el_init(program, stdin, stderr, stderr); }
