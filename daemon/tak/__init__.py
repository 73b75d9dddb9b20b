"""The casualty cards on the team's TAK map: a CASEVAC (9-line and ZMIST) as Cursor on Target, on the medic's word."""
