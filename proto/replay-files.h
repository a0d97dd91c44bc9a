/*
 * The names of a recording's files in a bundle: the daemon writes them,
 * "replay" reads them there, and dbgctl replay reads the bundle's
 * replay.json and passes its firmware.elf.
 */
#ifndef DBGCTL_REPLAY_FILES_H
#define DBGCTL_REPLAY_FILES_H

#define REPLAY_LOG	"replay.bin"
#define REPLAY_IMAGE	"replay.qcow2"
#define REPLAY_FIRMWARE	"firmware.elf"
#define REPLAY_META	"replay.json"

#endif
