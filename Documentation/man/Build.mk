# The manual pages: roff sources in Documentation/man, the version filled
# in under $(BUILD)/man, installed by make install into MANDIR.
# tests/doc/check-man.py (suite doc/man) checks them against groff and
# against the programs' --help.

MAN_SRCS := $(wildcard Documentation/man/*.[1-8])
MAN_PAGES := $(MAN_SRCS:Documentation/man/%=$(BUILD)/man/%)

$(BUILD)/man/%: Documentation/man/% Makefile
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)sed 's/@VERSION@/$(VERSION)/g' $< >$@

man: $(MAN_PAGES)
all: man

install: install-man
install-man: $(MAN_PAGES)
	$(Q)for p in $(MAN_PAGES); do s=$${p##*.}; \
		install -d $(DESTDIR)$(MANDIR)/man$$s && \
		install -m 644 $$p $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; done
.PHONY: man install-man

CHECK_DEPS += $(MAN_PAGES) $(XRAYFDR_BIN) $(CTL_BIN)
CHECK_SUITES += doc/man:tests/doc/check-man.py
