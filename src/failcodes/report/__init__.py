"""Reports: the tables, figures and HTML report that go into a paper."""
