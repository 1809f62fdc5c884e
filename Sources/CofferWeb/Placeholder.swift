enum WebPlaceholder {}
