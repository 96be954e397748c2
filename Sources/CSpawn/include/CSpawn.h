#ifndef CSPAWN_H
#define CSPAWN_H

#include <spawn.h>

// glibc's posix_spawn file actions that <spawn.h> declares only under _GNU_SOURCE, which the Swift Glibc module is
// built without: closing every descriptor from `from` up, and changing the working directory.
int cspawn_addclosefrom(posix_spawn_file_actions_t *actions, int from);
int cspawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);

#endif
