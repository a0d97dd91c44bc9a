/* Signal names and numbers as users write them: INT, SIGINT, 2. */
#ifndef DBGCTL_SIGNAME_H
#define DBGCTL_SIGNAME_H

/* Parse "INT", "SIGINT", "sigint" or "2"; -1 if it names no signal. */
int		 signame_parse(const char *);
/* "INT" for 2; NULL for an unknown number. */
const char	*signame_name(int);

#endif
