#ifndef CQRENCODE_SHIM_H
#define CQRENCODE_SHIM_H
// libqrencode (Debian libqrencode-dev): QR code symbols for approval links shown in the terminal.
#include <qrencode.h>
#endif
